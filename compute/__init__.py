"""The compute side: what a compute node discovers about itself, the
provider tree it reports to placement (with reshapes), and the agent
that keeps both current for clouds that do not run Nova."""
