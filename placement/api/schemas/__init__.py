"""JSON schemas of request bodies and query strings, one module per noun,
one schema per microversion where the accepted form changed."""
