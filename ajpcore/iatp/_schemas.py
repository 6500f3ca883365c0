"""The shipped IATP JSON Schemas as documents (``schema``); the envelopes compile theirs in ``ajpcore._envelope_schemas``."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Dict


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
    value: Dict[str, Any] = json.loads(_schema_text(name))
    return value
