"""Limits both core twins share (native: the header of ``native/_core_c.pyx``)."""

from __future__ import annotations

MAX_DEPTH = 512
"""Deepest nesting of containers ``canonicalize`` accepts (``[]`` has depth 1)."""

_MAX_SAFE_INT = 2**53 - 1
