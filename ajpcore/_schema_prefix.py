"""The first problems of a document from a copy whose long arrays are cut: what a schema refusal reads.

``CompiledSchema.errors`` lists the first ``MAX_PROBLEMS`` problems in document order.
jsonschema-rs hands back every error at once (64,000 bad items cost 2.2 s in the engine
alone), so for a document with long arrays the engine runs on ``cut(value, limit)``:
every array of more than ``limit`` items keeps its first ``limit``.  Up to the first
dropped item (``Cut.end``, a document position), that copy has exactly the problems of
the document when ``cut_is_exact`` holds: no schema applied along the way to a cut array
(the array itself and every container holding it) looks at more than each item and
member on its own.  ``cut_is_exact`` walks the schema along those paths (``properties``,
``additionalProperties``, ``items``, ``prefixItems``, ``allOf``, local ``$ref``) and
answers False at any keyword outside ``_ITEMWISE``: ``minItems``, ``contains``,
``uniqueItems``, ``if``, ``oneOf``, ``unevaluatedItems``, a container in ``enum`` or
``const``, ``patternProperties`` ... (the caller then reads the whole document).
Objects are never cut: ``required`` and its kin see every member name.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["Cut", "cut", "cut_is_exact"]

# Keywords whose verdict at a container depends only on its member names, or on each
# member or item alone; and annotations.  A cut array's container keeps all its names.
_ITEMWISE = frozenset({
    "$schema", "$id", "$anchor", "$defs", "definitions", "$comment", "title", "description", "default", "examples",
    "deprecated", "readOnly", "writeOnly", "contentEncoding", "contentMediaType",
    "type", "properties", "additionalProperties", "required", "dependentRequired", "propertyNames",
    "minProperties", "maxProperties", "items", "prefixItems", "allOf", "$ref",
    "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "enum", "const",
})

Path = Tuple[Any, ...]


class Cut:
    """``value``: the copy; ``paths``: the steps to each array that was cut; ``end``: the document
    position (member and item indices) of the first item dropped, None when nothing was cut."""

    __slots__ = ("value", "paths", "end")

    def __init__(self, value: Any, paths: List[Path], end: Optional[Tuple[int, ...]]) -> None:
        self.value = value
        self.paths = paths
        self.end = end


_SCALARS = (str, bool, type(None))


def _plain_scalar(value: Any) -> bool:
    """A scalar the engine reads as it is (the others go the whole-document way: ``copy_json_collecting``)."""
    kind = type(value)
    if kind is int:
        return bool(-(2**63) <= value < 2**64)
    if kind is float:
        return math.isfinite(value)
    return kind in _SCALARS


def _unlinked(link: Any) -> Tuple[Any, ...]:
    """The steps of a ``(parent_link, step)`` chain, from the root."""
    steps = []
    while link is not None:
        link, step = link
        steps.append(step)
    return tuple(reversed(steps))


def cut(value: Any, limit: int) -> Optional[Cut]:
    """``value`` with every array longer than ``limit`` cut to its first ``limit`` items (the
    containers copied, nothing else), or None when the document holds anything but plain JSON
    (a subclass, a set, a non-str name, NaN, an int beyond 64 bits): read whole, as before.
    Every node is visited (the dropped items only to check their types); iterative: any depth.
    A node's steps and position are linked to its parent's (``(parent_link, step)``), written out
    only for an array that is cut: building a tuple per node cost O(depth) each, O(depth**2) in all
    (a 200,000-deep list: about 50 s of CPU)."""
    paths: List[Path] = []
    ends: List[Tuple[int, ...]] = []
    root: List[Any] = [None]
    # (source, where its copy goes (container, key) or None when dropped, steps, document position)
    stack: List[Tuple[Any, Any, Any, Any, Any]] = [(value, root, 0, None, None)]
    while stack:
        source, parent, key, steps, position = stack.pop()
        kind = type(source)
        if kind is dict:
            copy: Any = dict(source) if parent is not None else None
            for index, (name, member) in enumerate(source.items()):
                if type(name) is not str:
                    return None
                if type(member) in (dict, list):
                    stack.append((member, copy, name, (steps, name), (position, index)))
                elif not _plain_scalar(member):
                    return None
        elif kind is list:
            copy = source[:limit] if parent is not None else None
            if parent is not None and len(source) > limit:
                paths.append(_unlinked(steps))
                ends.append(_unlinked(position) + (limit,))
            for index, item in enumerate(source):
                kept = copy if parent is not None and index < limit else None
                if type(item) in (dict, list):
                    stack.append((item, kept, index, (steps, index), (position, index)))
                elif not _plain_scalar(item):
                    return None
        elif not _plain_scalar(source):
            return None
        else:
            copy = source
        if parent is not None:
            parent[key] = copy
    return Cut(root[0], paths, min(ends) if ends else None)


def _resolve(root: Any, ref: Any) -> Optional[Any]:
    """The subschema a local ``$ref`` (``#`` or ``#/json/pointer``) names, else None."""
    if not isinstance(ref, str) or not ref.startswith("#") or (len(ref) > 1 and not ref.startswith("#/")):
        return None
    node = root
    for token in ref[2:].split("/") if len(ref) > 1 else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _applied(root: Any, schema: Any, out: List[Any], depth: int = 0) -> bool:
    """Add to ``out`` ``schema`` and every subschema ``allOf``/``$ref`` applies with it; False when
    one of them holds a keyword the cut could change the verdict of."""
    if depth > 64:
        return False
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or not _ITEMWISE.issuperset(schema):
        return False
    for name in ("enum", "const"):
        options = schema.get(name, ()) if name == "enum" else (schema[name],) if name in schema else ()
        if any(isinstance(option, (dict, list)) for option in options):
            return False
    out.append(schema)
    for part in schema.get("allOf", ()):
        if not _applied(root, part, out, depth + 1):
            return False
    if "$ref" in schema:
        target = _resolve(root, schema["$ref"])
        if target is None or not _applied(root, target, out, depth + 1):
            return False
    return True


def _child(schema: Dict[str, Any], step: Any) -> List[Any]:
    """The subschemas ``schema`` applies to its member or item ``step``."""
    if isinstance(step, str):
        properties = schema.get("properties", {})
        if step in properties:
            return [properties[step]]
        return [schema["additionalProperties"]] if "additionalProperties" in schema else []
    prefix = schema.get("prefixItems", [])
    if step < len(prefix):
        return [prefix[step]]
    return [schema["items"]] if "items" in schema else []


def cut_is_exact(root: Any, paths: List[Path]) -> bool:
    """True when no schema applied on the way to any cut array (nor to it) can see the cut."""
    for steps in paths:
        nodes: List[Any] = []
        if not _applied(root, root, nodes):
            return False
        for step in steps:
            following: List[Any] = []
            for node in nodes:
                if isinstance(node, dict):
                    for sub in _child(node, step):
                        if not _applied(root, sub, following):
                            return False
            nodes = following
    return True
