"""Griffe extension: document the core names ``ajpcore`` picks at import from one of its two twins.

``ajpcore.canonicalize = _impl.canonicalize`` (and ``canonicalize_into``, ``decode``,
``HmacSigner``, ``MAX_DEPTH``) is decided at run time, so static analysis sees an attribute
without a docstring.  The reference shows, under each public name, the signature of the stub
both twins share (``ajpcore/_core_c.pyi``) with the docstring of the pure twin
(``ajpcore._core_py``, the reference implementation), method by method.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

CORE_NAMES = ("canonicalize", "canonicalize_into", "decode", "HmacSigner", "MAX_DEPTH")

# A reST literal whose text ends in a backtick (``<reason> - at `<path>```) is no Markdown code
# span; padded with spaces (`` <reason> - at `<path>` ``) it is one, in both languages.
_REST_LITERAL = re.compile(r"``(?!\s)(.+?)``(?!`)")


def _markdown_literals(text: str) -> str:
    return _REST_LITERAL.sub(lambda m: f"`` {m.group(1)} ``" if "`" in m.group(1) else m.group(0), text)


def _fix_docstrings(obj: Any, seen: set) -> None:
    if obj.is_alias or id(obj) in seen:
        return
    seen.add(id(obj))
    if obj.docstring is not None:
        obj.docstring.value = _markdown_literals(obj.docstring.value)
    for member in obj.members.values():
        _fix_docstrings(member, seen)


def _with_docstrings(stub: Any, twin: Any) -> Any:
    """``stub`` with the docstrings of ``twin`` (and of its members, for a class) where the stub has none."""
    if stub.docstring is None and twin.docstring is not None:
        stub.docstring = griffe.Docstring(twin.docstring.value, parent=stub)
    if stub.is_class:
        for name, member in stub.members.items():
            if name in twin.members and not member.is_alias:
                other = twin.members[name]
                _with_docstrings(member, other.final_target if other.is_alias else other)
    return stub


class CoreTwinNames(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != "ajpcore":
            return
        _fix_docstrings(pkg, set())
        twin = loader.modules_collection["ajpcore._core_py"]
        stubs = pkg.members.get("_core_c")
        for name in CORE_NAMES:
            if name not in pkg.members or name not in twin.members:
                continue
            target = twin.members[name]
            target = target.final_target if target.is_alias else target
            if stubs is not None and name in stubs.members and not target.is_attribute:
                target = _with_docstrings(stubs.members[name], target)
            pkg.set_member(name, griffe.Alias(name, target, parent=pkg))
