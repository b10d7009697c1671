"""Host filters: one module per filter, each a vectorised boolean mask."""
