"""gantt's placement engine: providers, inventories, allocations and the
queries that answer which providers could hold a request."""
