"""Allocation candidates: which providers could hold a request.

A columnar numpy index of the providers (placement/candidates/index.py)
answers GET /allocation_candidates and the filters of GET
/resource_providers without scanning SQL; the database stays the truth
and the index is refreshed from the store's change log.
"""
