"""Bench contenders: our two twins side by side with the peers a user would otherwise pick.

Run: ``pytest bench --benchmark-only --benchmark-group-by=group`` (CI runs every bench
once with ``--benchmark-disable`` so they never rot).
"""

import pytest

from twins import twin


@pytest.fixture(params=["c", "py"], ids=["ajpcore-c", "ajpcore-py"])
def core_twin(request, monkeypatch):
    """One of our twins; also switches the layers on top of the core to it."""
    import ajpcore._core as _core

    module = twin(request.param)
    monkeypatch.setattr(_core, "impl", module)
    return module


SSRJSON_WHEELS = "its wheels are CPython 3.10-3.13 on Linux x86-64 (glibc 2.34+) only"


def _contender(module, label, why):
    """The module of an optional contender, or a skip saying why it is missing."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(f"{label} contender skipped: not importable ({exc}); {why}")


@pytest.fixture
def ssrjson():
    """The ssrjson module (a SIMD JSON library, the fastest decoder in issue 23), or a skip saying why."""
    return _contender("ssrjson", "ssrjson", SSRJSON_WHEELS)


@pytest.fixture
def pysimdjson():
    """pysimdjson's module (``simdjson``: simdjson's parser, a decode peer of docs/benchmarks.md), or a skip saying why."""
    return _contender("simdjson", "pysimdjson", "`pip install pysimdjson` adds it")
