"""The compiled schema of every envelope class, AJP and IATP alike: one mechanism.

An envelope class names its schema with ``_SCHEMA`` (``ajpcore._envelope``): the
name of a schema shipped in ``ajpcore/schemas/``, then the member path to the
part, e.g. ``("ajp-job-offer", "from")`` for ``Sender`` or
``("iatp-capability-manifest", "reversibility", "undo_conditions")``.  The class
compiles it here on first use; each (name, path) is compiled once and shared (the
receive path's ``JobOffer`` schema is the same object as ``JobOffer``'s).
"""

from __future__ import annotations

import functools
from typing import Callable, Dict, Mapping, Optional

from ._schema import CompiledSchema, compile_schema
from .schemas import load

__all__ = ["compiled"]

# The published IATP schemas' validators treat `email`, `uri` and `uri-reference` as
# annotations, and IATP-002's own examples use endpoints such as
# `POST /compensate/{transaction_id}` that are no URI reference: of the IATP formats only
# `date-time` is asserted.  AJP asserts every format its schemas name.
_FORMATS: Dict[str, Mapping[str, Optional[Callable[[str], bool]]]] = {
    "iatp": {"email": None, "uri": None, "uri-reference": None},
}


@functools.lru_cache(maxsize=None)
def compiled(name: str, *members: str) -> CompiledSchema:
    """The shipped schema ``name``, or the subschema of the part at ``members``, compiled.

    A part is validated alone, under its document's ``$schema``.  A part is an
    object: a member declared ``"type": ["object", "null"]`` (AJP's ``callback``)
    gives its part the schema of the object (null is the parent's ``None``).
    """
    document = load(name)
    node = document
    for key in members:
        node = node["properties"][key]
    if members and isinstance(node, dict):
        node = dict(node, **{"$schema": document["$schema"]})
        kinds = node.get("type")
        if isinstance(kinds, list) and "object" in kinds:
            node["type"] = "object"
    return compile_schema(node, formats=_FORMATS.get(name.split("-", 1)[0]))
