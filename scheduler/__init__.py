"""gantt's scheduler: select_destinations over vectorised host state."""
