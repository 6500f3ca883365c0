"""Shared fixtures: every behaviour-level test runs on both core twins.

``impl`` is the core module itself (``c`` or ``py``); ``core`` also switches
the layers built on top (signing, envelopes) to that twin for the test.  Under
``AJPCORE_REQUIRE_EXTENSIONS=1`` (CI) a missing native core fails, never skips.
"""

import importlib
import os
import subprocess
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, settings

import ajpcore._core as _core

# No per-example deadline: the machine is shared and timing is not what these tests check.
# CI runs derandomized so a red run is reproducible from its seed-free log.
settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")

_TRUE = {"1", "true", "yes", "on"}
REQUIRE_NATIVE = os.environ.get("AJPCORE_REQUIRE_EXTENSIONS", "").strip().lower() in _TRUE


def load_twin(name: str):
    """The core twin ``"c"`` or ``"py"``; skip (or fail, when required) if the native one is absent."""
    try:
        return importlib.import_module(f"ajpcore._core_{name}")
    except ImportError as exc:
        if REQUIRE_NATIVE:
            pytest.fail(f"native core required but not importable: {exc}")
        pytest.skip(f"native core not built: {exc}")


@pytest.fixture(params=["c", "py"])
def impl(request):
    return load_twin(request.param)


@pytest.fixture(params=["c", "py"])
def core(request, monkeypatch):
    module = load_twin(request.param)
    monkeypatch.setattr(_core, "impl", module)
    return module


@pytest.fixture(scope="session")
def twins():
    """Both twins at once, for differential tests: (native, pure)."""
    return load_twin("c"), load_twin("py")


def run_python(*args, stdin=b"", env=None):
    """Run ``python *args`` as a user would: from a neutral directory, so the installed
    ajpcore is imported, never the source tree in the current directory."""
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        cwd=tempfile.gettempdir(),
        env=env,
    )
