"""The one place that picks the core backend: native ``_core_c`` or pure ``_core_py``.

``AJPCORE_NO_EXTENSIONS`` (1/true/yes/on) forces the pure twin;
``AJPCORE_REQUIRE_EXTENSIONS`` makes a missing native core an ImportError naming
it and how to build it; otherwise the native core is used when it imports.
Decided once, at import.  ``PURE_REASON`` says why the pure twin runs (None: native).
``clear_hmac_cache()`` forgets the HMAC secrets the core caches and every cache of
them a higher layer registered with ``forget_with_hmac_cache`` (the replay
identities of ``ajpcore.ajp``): the registry lives on this floor, so nothing
here needs to know those layers.
``SIMD`` is the native core's vector level (``"avx2"``, ``"sse2"`` or ``"scalar"``: the best
the CPU has, or the one ``AJPCORE_SIMD`` forces; see native/simd.h), None on the pure twin.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Callable, List, Optional

__all__ = ["BACKEND", "PURE_REASON", "SIMD", "clear_hmac_cache", "forget_with_hmac_cache", "impl"]

_TRUE = {"1", "true", "yes", "on"}
_BUILD_HINT = (
    "Build it with a C compiler and the Python headers installed: `pip install --no-binary ajpcore ajpcore`, "
    "or `pip install .` in a source checkout (with AJPCORE_REQUIRE_EXTENSIONS=1 set, a failed build stops "
    "with the compiler's error). Unset AJPCORE_REQUIRE_EXTENSIONS to run on the pure-Python core."
)


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


PURE_REASON: Optional[str] = None
if TYPE_CHECKING:
    from . import _core_c as impl  # the stub: the precise signatures both twins share
elif _flag("AJPCORE_NO_EXTENSIONS"):
    impl = importlib.import_module("ajpcore._core_py")
    PURE_REASON = "AJPCORE_NO_EXTENSIONS is set"
else:
    try:
        impl = importlib.import_module("ajpcore._core_c")
    except ImportError as exc:
        missing = isinstance(exc, ModuleNotFoundError) and exc.name == "ajpcore._core_c"
        PURE_REASON = "no compiled extension: " + ("ajpcore._core_c is not installed" if missing else str(exc))
        if _flag("AJPCORE_REQUIRE_EXTENSIONS"):
            raise ImportError(
                f"AJPCORE_REQUIRE_EXTENSIONS is set, but ajpcore's native core is not usable ({PURE_REASON}). {_BUILD_HINT}"
            ) from None
        impl = importlib.import_module("ajpcore._core_py")

BACKEND = "c" if PURE_REASON is None else "py"
SIMD: Optional[str] = getattr(impl, "SIMD", None) if BACKEND == "c" else None


_HMAC_SECRET_CACHES: List[Callable[[], None]] = []


def forget_with_hmac_cache(forget: Callable[[], None]) -> Callable[[], None]:
    """Register ``forget`` (a cache of HMAC secrets above the core) to run at each ``clear_hmac_cache()``.

    Returns ``forget``, so it works as a decorator.
    """
    _HMAC_SECRET_CACHES.append(forget)
    return forget


def clear_hmac_cache() -> None:
    """Forget every cached HMAC secret: the core's keyed states and the replay identities of ``ajpcore.ajp``."""
    impl.clear_hmac_cache()
    for forget in tuple(_HMAC_SECRET_CACHES):
        forget()
