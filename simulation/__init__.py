"""Offline simulation for operators: replay a workload on a modelled
cloud with the real scheduler and placement code, and report."""
