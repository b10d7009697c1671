"""gantt's command-line programs: what sits on top of placement, the
scheduler and the RPC service together (gantt.cmd)."""
