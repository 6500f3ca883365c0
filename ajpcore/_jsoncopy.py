"""One checked deep copy of a Python value that claims to be JSON.

Typed envelopes built from a Python object (``from_dict``, keyword
constructors) go through here so that hostile objects fail early, with every
problem listed, and the envelope never aliases the caller's containers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping as _AbcMapping  # typing.Mapping's isinstance is ~10x slower
from typing import Any, List, Tuple

from . import _core
from .errors import EncodeError, ValidationError, format_path

_MAX_SAFE_INT = 2**53 - 1
_INF = float("inf")
_FINITE = math.isfinite


def copy_json(value: Any) -> Any:
    """A deep copy of ``value`` in plain dict/list/str/int/float/bool/None.

    Mappings become dicts, tuples lists, subclasses of str/int/float their base
    type.  Raises ``ValidationError`` listing every part that has no canonical
    JSON form (non-str member names, lone surrogates, NaN/infinities, ints a
    binary64 cannot carry, other types, nesting deeper than ``MAX_DEPTH``).
    Walks with an explicit stack: any depth of input is safe.
    """
    errors: List[Tuple[str, str]] = []
    copied = copy_json_collecting(value, errors)
    if errors:
        raise ValidationError(errors)
    return copied


def _is_container(v: Any) -> bool:
    return isinstance(v, (dict, list, tuple, _AbcMapping))


def _scalar(v: Any, steps: List[Any], errors: List[Tuple[str, str]]) -> Any:
    t = type(v)
    if t is str:
        if not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                errors.append((format_path(steps), "String contains a lone surrogate"))
        return v
    if v is None or t is bool:
        return v
    if t is int:
        if not -_MAX_SAFE_INT <= v <= _MAX_SAFE_INT:
            # Beyond 2**53 an int is JSON only if one binary64 carries it exactly
            # (the rule canonicalize and decode share): ask the core.
            try:
                _core.impl.canonicalize(v)
            except EncodeError as exc:
                errors.append((format_path(steps), exc.reason))
        return v
    if t is float:
        if v != v or v in (_INF, -_INF):
            errors.append((format_path(steps), f"Non-finite float `{v!r}` has no JSON form"))
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return _scalar(int(v), steps, errors)
    if isinstance(v, float):
        return _scalar(float(v), steps, errors)
    if isinstance(v, str):
        return _scalar(str.__str__(v), steps, errors)
    errors.append((format_path(steps), f"Expected a JSON value, got `{type(v).__name__}`"))
    return None


def copy_json_collecting(value: Any, errors: List[Tuple[str, str]]) -> Any:
    """``copy_json`` that appends its problems to ``errors`` instead of raising
    (for callers that gather problems from several checks into one refusal)."""
    if not _is_container(value):
        return _scalar(value, [], errors)
    max_depth = _core.impl.MAX_DEPTH
    root: Any = {} if isinstance(value, _AbcMapping) else []
    # Each frame: source container, its copy, iterator over its items, its path.
    stack: List[Tuple[Any, Any, Any, List[Any]]] = []

    def push(src: Any, dst: Any, steps: List[Any]) -> bool:
        if len(stack) >= max_depth:
            errors.append((format_path(steps), f"Nesting deeper than {max_depth} levels"))
            return False
        items = iter(src.items()) if isinstance(src, _AbcMapping) else iter(enumerate(src))
        stack.append((src, dst, items, steps))
        return True

    push(value, root, [])
    while stack:
        src, dst, items, steps = stack[-1]
        is_object = isinstance(dst, dict)
        for key, item in items:
            if is_object:
                if not isinstance(key, str):
                    errors.append((format_path(steps), f"Expected `str` member names, got `{type(key).__name__}`"))
                    continue
                key = str.__str__(key)
                if not key.isascii():
                    try:
                        key.encode("utf-8")
                    except UnicodeEncodeError:
                        errors.append((format_path(steps), "Member name contains a lone surrogate"))
            t = type(item)
            if t is str and item.isascii() or t is bool or item is None or t is float and _FINITE(item) or t is int and -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                # The common scalars, nothing to check (the rules are in `_scalar`).
                if is_object:
                    dst[key] = item
                else:
                    dst.append(item)
                continue
            child_steps = steps + [key]
            if t is dict or t is list or _is_container(item):
                child: Any = {} if isinstance(item, _AbcMapping) else []
                if is_object:
                    dst[key] = child
                else:
                    dst.append(child)
                if push(item, child, child_steps):
                    break
            else:
                copied = _scalar(item, child_steps, errors)
                if is_object:
                    dst[key] = copied
                else:
                    dst.append(copied)
        else:
            stack.pop()
    return root
