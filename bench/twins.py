"""Our two core twins as bench contenders.

The native twin is missing on a pure install: its contenders skip with the reason
(so the README's test command passes there too), unless AJPCORE_REQUIRE_EXTENSIONS
is set, where a missing native core fails, as in the tests.
"""

import importlib
import os

import pytest

_TRUE = {"1", "true", "yes", "on"}


def twin(name: str):
    """The core twin ``"c"`` or ``"py"``; skips (fails when required) if the native one is absent."""
    try:
        return importlib.import_module(f"ajpcore._core_{name}")
    except ImportError as exc:
        if os.environ.get("AJPCORE_REQUIRE_EXTENSIONS", "").strip().lower() in _TRUE:
            pytest.fail(f"native core required but not importable: {exc}")
        pytest.skip(f"native contender skipped: ajpcore's native core is not installed ({exc})")
