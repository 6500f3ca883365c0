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

# AJPCORE_HYPOTHESIS_SIZE: "full" (default) runs every property test at the example count it
# declares; "quick" runs a fifth of it (at least 10).  CI runs "full" on one Python version and
# "quick" on the others, so the matrix stays short while every version runs every property.
HYPOTHESIS_SIZES = {"full": 1.0, "quick": 0.2}
HYPOTHESIS_SIZE = os.environ.get("AJPCORE_HYPOTHESIS_SIZE", "full").strip().lower() or "full"
if HYPOTHESIS_SIZE not in HYPOTHESIS_SIZES:
    raise pytest.UsageError(f"AJPCORE_HYPOTHESIS_SIZE must be one of {sorted(HYPOTHESIS_SIZES)}, got {HYPOTHESIS_SIZE!r}")

_TRUE = {"1", "true", "yes", "on"}
REQUIRE_NATIVE = os.environ.get("AJPCORE_REQUIRE_EXTENSIONS", "").strip().lower() in _TRUE


def pytest_report_header(config):
    """Say loudly which ajpcore is under test: its version, core and where it was imported from."""
    import ajpcore
    from ajpcore.cli import version_text

    lines = [f"{version_text()}; imported from {os.path.dirname(ajpcore.__file__)}"]
    if ajpcore.BACKEND != "c":
        lines.append("*** testing the PURE PYTHON core: native-twin tests skip (AJPCORE_REQUIRE_EXTENSIONS=1 fails them) ***")
    lines.append(f"hypothesis size: {HYPOTHESIS_SIZE} (AJPCORE_HYPOTHESIS_SIZE)")
    return lines


def pytest_collection_modifyitems(config, items):
    """Scale every property test's declared ``max_examples`` by the AJPCORE_HYPOTHESIS_SIZE factor."""
    scale = HYPOTHESIS_SIZES[HYPOTHESIS_SIZE]
    if scale == 1.0:
        return
    seen = set()
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        current = getattr(test, "_hypothesis_internal_use_settings", None)
        if current is None or id(test) in seen:
            continue
        seen.add(id(test))
        if current.max_examples > 10:
            test._hypothesis_internal_use_settings = settings(
                current, max_examples=max(10, round(current.max_examples * scale))
            )


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


def same_canonical(twins, value):
    """Both twins' ``canonicalize(value)``: the same bytes (returned), or the same refusal (None)."""
    from ajpcore.errors import EncodeError

    native, pure = twins
    try:
        expected = pure.canonicalize(value)
    except EncodeError as exc:
        with pytest.raises(EncodeError) as info:
            native.canonicalize(value)
        assert str(info.value) == str(exc)
        return None
    assert native.canonicalize(value) == expected
    return expected


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
