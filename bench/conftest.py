"""Bench contenders: our two twins side by side with the peers a user would otherwise pick.

Run: ``pytest bench --benchmark-only --benchmark-group-by=group`` (CI runs every bench
once with ``--benchmark-disable`` so they never rot).
"""

import importlib

import pytest


def twin(name: str):
    """The core twin ``"c"`` or ``"py"`` (fails if the native core is missing: a bench without it is meaningless)."""
    try:
        return importlib.import_module(f"ajpcore._core_{name}")
    except ImportError as exc:  # pragma: no cover
        pytest.fail(f"native core not importable: {exc}")


@pytest.fixture(params=["c", "py"], ids=["ajpcore-c", "ajpcore-py"])
def core_twin(request, monkeypatch):
    """One of our twins; also switches the layers on top of the core to it."""
    import ajpcore._core as _core

    module = twin(request.param)
    monkeypatch.setattr(_core, "impl", module)
    return module
