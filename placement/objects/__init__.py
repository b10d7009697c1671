"""Placement objects: plain classes and module functions over the store.

Every function takes ``db`` first: a Store (the call is one transaction of
its own) or a Txn (the call joins that transaction). Writes raise the typed
errors of placement.errors and store nothing when they fail.
"""
