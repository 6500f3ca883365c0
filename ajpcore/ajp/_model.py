"""Where the AJP envelopes get their schemas (the envelope model itself is ``ajpcore._envelope``)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping, Tuple

from .._envelope import Envelope
from .._schema import CompiledSchema, compile_schema
from ..schemas import load as _load_schema

_MISSING: Any = object()
_EMPTY: Mapping[str, Any] = MappingProxyType({})
_Envelope = Envelope  # the name of the AJP base before the one envelope model


def _schema(name: str) -> Tuple[Any, CompiledSchema]:
    doc = _load_schema(name)
    return doc, compile_schema(doc)


def _part_schema(doc: Any, *pointer: str) -> CompiledSchema:
    """A subschema of an envelope schema, compiled on its own (a part validated alone)."""
    sub = doc
    for step in pointer:
        sub = sub[step]
    if isinstance(sub, dict):
        sub = dict(sub, **{"$schema": doc["$schema"]})
    return compile_schema(sub)
