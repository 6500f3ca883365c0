"""The one place that picks the core backend: native ``_core_c`` or pure ``_core_py``.

``AJPCORE_NO_EXTENSIONS`` (1/true/yes/on) forces the pure twin;
``AJPCORE_REQUIRE_EXTENSIONS`` makes a missing native core an ImportError;
otherwise the native core is used when it imports.  Decided once, at import.
"""

import os

_TRUE = {"1", "true", "yes", "on"}


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


if _flag("AJPCORE_NO_EXTENSIONS"):
    from . import _core_py as impl
elif _flag("AJPCORE_REQUIRE_EXTENSIONS"):
    from . import _core_c as impl  # an ImportError here is the point
else:
    try:
        from . import _core_c as impl
    except ImportError:  # pragma: no cover - exercised by pure installs
        from . import _core_py as impl

BACKEND = "c" if impl.__name__.endswith("_core_c") else "py"
