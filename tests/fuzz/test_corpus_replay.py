"""Replay every committed fuzz input on both twins, in the normal test suite (no atheris, no clang).

``tests/fuzz/corpus/<target>/`` is the minimized seed corpus of each harness and
``tests/fuzz/regressions/<target>/`` every input that ever found a bug (README.md there
says which).  Each file goes through the harness's ``check(data, twin)`` with the
native and with the pure twin (the ``impl`` fixture): the twin must agree with the
pure twin's reference and with the independent oracles the harness uses
(``float()``/``int()`` for numbers, the ``hmac`` module, the reference parser).
"""

import importlib
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

TARGETS = ("decode", "canonicalize", "numbers", "rfc3339", "hmac", "ed25519", "card", "location")


def inputs(kind, target):
    folder = HERE / kind / target
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name != "README.md") if folder.is_dir() else []


def replay(target, kind, impl):
    harness = importlib.import_module(f"fuzz_{target}")
    failures = []
    files = inputs(kind, target)
    for path in files:
        try:
            harness.check(path.read_bytes(), impl)
        except Exception as exc:  # noqa: BLE001  (each failure is reported with its file)
            failures.append(f"{path.relative_to(HERE)}: {type(exc).__name__}: {str(exc)[:500]}")
    assert not failures, f"{len(failures)} of {len(files)} inputs fail on {impl.__name__}:\n" + "\n".join(failures)
    return len(files)


@pytest.mark.parametrize("target", TARGETS)
def test_seed_corpus_replays_on_both_twins(target, impl):
    assert replay(target, "corpus", impl) > 0, f"tests/fuzz/corpus/{target} is empty"


@pytest.mark.parametrize("target", TARGETS)
def test_regression_inputs_replay_on_both_twins(target, impl):
    replay(target, "regressions", impl)


def test_every_harness_has_a_seed_corpus():
    harnesses = sorted(p.stem[len("fuzz_"):] for p in HERE.glob("fuzz_*.py"))
    assert harnesses == sorted(TARGETS)
    assert all(os.listdir(HERE / "corpus" / t) for t in TARGETS)
