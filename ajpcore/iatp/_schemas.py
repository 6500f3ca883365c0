"""The shipped IATP JSON Schemas and their compiled validators."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Dict, List, Tuple


SCHEMA_NAMES = (
    "iatp-capability-manifest",
    "iatp-compensation-request",
    "iatp-compensation-response",
    "iatp-compensation-chain",
    "iatp-compensation-chain-entry",
    "iatp-audit-event",
    "iatp-attestation",
)
"""Names of the IATP schemas shipped in ``ajpcore/schemas/`` (``<name>.schema.json``)."""


@functools.lru_cache(maxsize=None)
def _schema_text(name: str) -> str:
    if name not in SCHEMA_NAMES:
        raise ValueError(f"unknown IATP schema `{name}` (one of {', '.join(SCHEMA_NAMES)})")
    return resources.files("ajpcore.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")


def schema(name: str) -> Dict[str, Any]:
    """A fresh copy of the shipped Draft 2020-12 schema ``ajpcore/schemas/<name>.schema.json``.

    ``name`` is one of ``SCHEMA_NAMES``; raises ``ValueError`` for any other.
    """
    return json.loads(_schema_text(name))


# The published schema's validators treat `email`, `uri` and `uri-reference` as
# annotations, and IATP-002's own examples use endpoints such as
# `POST /compensate/{transaction_id}` that are no URI reference: only `date-time`
# is asserted.
_ANNOTATION_FORMATS = {"email": None, "uri": None, "uri-reference": None}


@functools.lru_cache(maxsize=None)
def _validator(name: str, *subpath: str) -> Any:
    from .._schema import compile_schema

    node: Any = schema(name)
    for key in subpath:
        node = node["properties"][key]
    return compile_schema(node, formats=_ANNOTATION_FORMATS)


def _problems(name: str, subpath: Tuple[str, ...], value: Any) -> List[Tuple[str, str]]:
    return list(_validator(name, *subpath).errors(value))
