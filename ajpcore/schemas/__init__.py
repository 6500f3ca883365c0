"""The JSON Schemas (Draft 2020-12) of the AJP and IATP envelopes, shipped with ajpcore.

``load("ajp-job-offer")`` returns the parsed schema of ``ajp-job-offer.schema.json``;
``names()`` lists every schema shipped.  Each call returns a fresh copy.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, List

__all__ = ["load", "names"]

_SUFFIX = ".schema.json"


def names() -> List[str]:
    """The names ``load`` accepts, sorted (``ajp-job-offer``, ``iatp-capability-manifest``...)."""
    return sorted(
        p.name[: -len(_SUFFIX)] for p in resources.files(__name__).iterdir() if p.name.endswith(_SUFFIX)
    )


def load(name: str) -> Any:
    """The schema ``<name>.schema.json`` as a fresh Python value; ``KeyError`` for an unknown name."""
    if not isinstance(name, str) or name not in names():
        raise KeyError(f"no schema named {name!r} (known: {', '.join(names())})")
    return json.loads(resources.files(__name__).joinpath(name + _SUFFIX).read_bytes())
