"""A real Nova 34 deployment in front of gantt (see README.md here)."""
