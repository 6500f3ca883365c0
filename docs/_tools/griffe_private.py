"""Griffe extension: keep private names off the API reference.

``filters: ["!^_"]`` (mkdocs.yml) drops private members, but private names still reached the
pages through signatures and values: a constructor's ``_token`` parameter (the guard that
keeps a class from being built by hand), a private type alias in an annotation
(``secret: _Secret``), a private constant as a default, and an attribute whose value is a call
of a private helper (``max_entries = _positive_int(...)``) or a list of private modules.  This
removes every parameter whose name starts with one underscore, writes a private alias or
constant out as its definition (``_Secret`` -> ``Union[bytes, str, None]``; ``...`` when that
cannot be done) and a private class as its first public base, and drops the shown value of an attribute whose value names a
private name; constants such as ``DEFAULT_QUOTA_SHARE = 4`` keep theirs.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_PRIVATE = re.compile(r"(?<![\w.'\"])_[A-Za-z0-9]\w*|\._[A-Za-z0-9]\w*")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_of(obj: Any) -> Any:
    while not obj.is_module:
        obj = obj.parent
    return obj


def _written_out(expr: Any, module: Any, depth: int = 0) -> Any:
    """``expr`` (an annotation or default) with each private name of ``module`` replaced by its value."""
    text = str(expr)
    if not _PRIVATE.search(text):
        return expr

    def value_of(match: Any) -> str:
        name = match.group(0).lstrip(".")
        member = module.members.get(name)
        if member is not None and member.is_alias:
            try:
                member = member.final_target
            except (griffe.AliasResolutionError, griffe.CyclicAliasError):  # a name of another package
                return name.lstrip("_")
        if member is not None and member.is_class:  # a private class: its first public base
            bases = [str(base) for base in member.bases if not _PRIVATE.search(str(base))]
            return bases[0] if bases else "object"
        if member is None or not member.is_attribute or member.value is None or depth > 3:
            return "..."
        target = member
        return str(_written_out(target.value, _module_of(target), depth + 1))

    return _PRIVATE.sub(value_of, text)


def _hide(obj: Any, seen: set) -> None:
    if obj.is_alias or id(obj) in seen:
        return
    seen.add(id(obj))
    if obj.is_function:
        for name in [p.name for p in obj.parameters if _is_private(p.name)]:
            del obj.parameters[name]
        module = _module_of(obj)
        for parameter in obj.parameters:
            if parameter.annotation is not None:
                parameter.annotation = _written_out(parameter.annotation, module)
            if parameter.default is not None:
                parameter.default = _written_out(parameter.default, module)
        if obj.returns is not None:
            obj.returns = _written_out(obj.returns, module)
    if obj.is_attribute and obj.value is not None and _PRIVATE.search(str(obj.value)):
        obj.value = None
    if obj.is_attribute and obj.annotation is not None:
        obj.annotation = _written_out(obj.annotation, _module_of(obj))
    for member in obj.members.values():
        _hide(member, seen)


class HidePrivateNames(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path == "ajpcore":
            _hide(pkg, set())
