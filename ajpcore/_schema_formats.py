"""Python format checkers confirmed after jsonschema-rs instead of called from inside it, where exact.

jsonschema-rs calls a Python format checker (``date-time`` is
``ajpcore.timestamps.is_timestamp``) through a callback, and any such callback
makes every ``is_valid`` call several microseconds slower, whether or not a value
has the format.  Where it changes no verdict, the adapter runs a second engine
without the callbacks (its own Rust checker reads those ``format`` keywords, so
it reads the same values), and confirms each string it accepted with the Python
checker: ``split_formats`` says where.  Exact when every such ``format`` sits on
a chain of ``properties`` from the root (it applies whenever the member exists),
nothing reaches those subschemas another way (no ``$ref``/``$dynamicRef``/
``$recursiveRef`` anywhere in the document), and the engine has a checker of
that name: a value the second engine accepts is then valid exactly when every
string at those paths passes the Python checker (``formats_hold``).  A value it
refuses goes to the engine with callbacks, which decides (its own checker may
refuse what the Python one accepts).
"""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

from . import _core
from .timestamps import is_timestamp

__all__ = ["FormatCheck", "split_formats", "formats_hold", "formats_holder"]

FormatCheck = Tuple[Tuple[str, ...], Callable[[str], bool]]
"""A member path from the root (``properties`` names) and the checker of the string found there."""

ENGINE_FORMATS = frozenset({"date-time"})
"""Formats jsonschema-rs also checks itself: the ones whose Python checker can move out."""
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")


def _census(schema: Any, names: Mapping[str, Any]) -> Optional[int]:
    """How many objects anywhere in ``schema`` (schema or not: an overcount only disables the split)
    have a ``format`` in ``names``; ``None`` for a reference or a format the engine lacks."""
    count = 0
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if any(ref in node for ref in _REFS):
                return None
            name = node.get("format")
            if isinstance(name, str) and name in names:
                if name not in ENGINE_FORMATS:
                    return None
                count += 1
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def split_formats(schema: Any, checkers: Mapping[str, Callable[[str], bool]]) -> Optional[List[FormatCheck]]:
    """The checks to run after the engine without ``checkers``, or ``None`` where that would not be exact
    (or when no such format occurs: nothing to move).  ``schema`` is not modified."""
    if not isinstance(schema, dict):
        return None
    expected = _census(schema, checkers)
    if not expected:
        return None
    checks: List[FormatCheck] = []
    stack: List[Tuple[Any, Tuple[str, ...]]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        name = node.get("format")
        if isinstance(name, str) and name in checkers:
            checks.append((path, checkers[name]))
        members = node.get("properties")
        if isinstance(members, dict):
            stack.extend((sub, path + (k,)) for k, sub in reversed(members.items()) if isinstance(sub, dict))
    return checks if len(checks) == expected else None


def formats_hold(value: Any, checks: Sequence[FormatCheck]) -> bool:
    """Whether every string at the paths of ``checks`` in ``value`` passes its checker."""
    for path, check in checks:
        node = value
        for key in path:
            if not isinstance(node, dict) or key not in node:
                break
            node = node[key]
        else:
            if isinstance(node, str) and not check(node):
                return False
    return True


def formats_holder(checks: Sequence[FormatCheck]) -> Callable[[Any], bool]:
    """``lambda value: formats_hold(value, checks)``, quicker where every path is one member of the
    root (AJP's ``issued_at``/``expires_at``) and ``value`` is a plain dict: for a plain dict,
    ``key in value`` then ``value[key]`` reads what ``value.get(key)`` reads, and a member that is
    absent (``None``) or not a string is skipped by both."""
    frozen = tuple(checks)
    if not frozen or any(len(path) != 1 for path, _ in frozen):
        return lambda value: formats_hold(value, frozen)
    members = tuple((path[0], check) for path, check in frozen)
    if all(check is is_timestamp for _, check in members):
        return _timestamps_holder(tuple(key for key, _ in members), frozen)

    def hold(value: Any) -> bool:
        if type(value) is not dict:
            return formats_hold(value, frozen)
        for key, check in members:
            node = value.get(key)
            if isinstance(node, str) and not check(node):
                return False
        return True

    return hold


def _timestamps_holder(keys: Tuple[str, ...], frozen: Tuple[FormatCheck, ...]) -> Callable[[Any], bool]:
    """``formats_holder`` where every checker is ``is_timestamp``: its parse inlined, one call fewer a member."""

    def hold(value: Any) -> bool:
        if type(value) is not dict:
            return formats_hold(value, frozen)
        parse = _core.impl.rfc3339_micros  # what is_timestamp calls, read per call (the backend switch)
        for key in keys:
            node = value.get(key)
            if isinstance(node, str) and parse(node) is None:
                return False
        return True

    return hold
