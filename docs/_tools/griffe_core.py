"""Griffe extension: document the core names ``ajpcore`` picks at import from one of its two twins.

``ajpcore.canonicalize = _impl.canonicalize`` (and ``canonicalize_into``, ``decode``,
``HmacSigner``, ``MAX_DEPTH``) is decided at run time, so static analysis sees an attribute
without a docstring.  Both twins share one signature (``ajpcore/_core_c.pyi``, checked by
the tests); the pure twin ``ajpcore._core_py`` is the reference and carries the docstrings,
so the reference shows its objects under the public names.
"""

from __future__ import annotations

from typing import Any

import griffe

CORE_NAMES = ("canonicalize", "canonicalize_into", "decode", "HmacSigner", "MAX_DEPTH")


class CoreTwinNames(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != "ajpcore":
            return
        twin = loader.modules_collection["ajpcore._core_py"]
        for name in CORE_NAMES:
            if name in pkg.members and name in twin.members:
                pkg.set_member(name, griffe.Alias(name, twin.members[name].final_target, parent=pkg))
