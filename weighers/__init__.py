"""Host weighers: one module per weigher, each a float array per host."""
