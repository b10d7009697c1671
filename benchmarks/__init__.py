"""Benchmarks: each a ``python -m benchmarks.<name>`` that prints JSON
(docs/performance.md).

Importing gantt's rpc package first makes oslo.service take its
threading backend before any benchmark imports oslo.messaging (which
otherwise loads eventlet's and warns, at every start, that eventlet is
deprecated; gantt never runs on it). Imported under another name:
``rpc`` here would hide the benchmarks.rpc module from ``from
benchmarks import rpc``."""

import rpc as _gantt_rpc  # noqa: F401
