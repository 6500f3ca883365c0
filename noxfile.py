"""CI jobs (``bash .ci/run`` runs each one; ``nox -l`` lists them, ``nox -s NAME`` runs one).

- ``tests-3.X`` for every ``Programming Language :: Python :: 3.X`` classifier in
  pyproject.toml: a fresh venv, the README's test command verbatim, native core
  required (``AJPCORE_REQUIRE_EXTENSIONS=1``).  Property tests run at full size on
  ``FULL_SIZE_PYTHON`` and at a fifth elsewhere (``AJPCORE_HYPOTHESIS_SIZE``).
  A declared version missing from the machine fails, never skips.
- ``pure``: the same command on a pure install (``AJPCORE_NO_EXTENSIONS=1``), benches once.
- ``mypy``: ``mypy --strict -p ajpcore``.
- ``package``: ``python -m build``; the wheel, and the sdist built without a compiler,
  each installed in a fresh venv outside the clone, run ``ajpcore --version`` and the demo.
- ``fuzz``: the native core built with clang (ASan + UBSan + libFuzzer coverage), every
  harness of tests/fuzz fuzzed for a fixed time on the committed corpus (tests/fuzz/README.md).
"""

from __future__ import annotations

import glob
import os
import re
import tempfile
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
nox.options.error_on_missing_interpreters = True
nox.options.default_venv_backend = "venv"

PYTHONS = [
    c.rsplit(" :: ", 1)[1]
    for c in tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["classifiers"]
    if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
]
FULL_SIZE_PYTHON = "3.11"
"""The version whose job runs every property test at its declared example count."""
TOOLS_PYTHON = "3.11"
"""The version of the single jobs (pure, mypy, package)."""

QUIET_PIP = {"PIP_QUIET": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def readme_test_command() -> str:
    """The README's test command, verbatim: its first line that starts with ``pip install '.[test]'``."""
    for line in (ROOT / "README.md").read_text("utf-8").splitlines():
        if line.startswith("pip install '.[test]'"):
            return line.strip()
    raise RuntimeError("README.md has no line starting with: pip install '.[test]'")


SWITCHES = ("AJPCORE_NO_EXTENSIONS", "AJPCORE_REQUIRE_EXTENSIONS", "AJPCORE_HYPOTHESIS_SIZE")


def _clean_env(session: nox.Session, **env: str) -> None:
    """This job's switches on top of the caller's environment, which must hold none of ``SWITCHES``."""
    stray = [n for n in SWITCHES if n in os.environ]
    if stray:
        session.error(f"unset {', '.join(stray)} first: each job sets its own")
    session.env.update(QUIET_PIP)
    session.env.update(env)


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The README's test command on one Python, native core required."""
    size = "full" if session.python == FULL_SIZE_PYTHON else "quick"
    _clean_env(session, AJPCORE_REQUIRE_EXTENSIONS="1", AJPCORE_HYPOTHESIS_SIZE=size)
    session.run("python", "-m", "pip", "install", "--upgrade", "pip")
    command = readme_test_command()
    session.log(f"README test command: {command}")
    session.run("bash", "-c", command, external=True)


@nox.session(python=TOOLS_PYTHON)
def pure(session: nox.Session) -> None:
    """The README's test command on a pure install: native contenders skip with their reason."""
    _clean_env(session, AJPCORE_NO_EXTENSIONS="1", AJPCORE_HYPOTHESIS_SIZE="quick")
    session.run("python", "-m", "pip", "install", "--upgrade", "pip")
    session.run("bash", "-c", readme_test_command(), external=True)
    version = session.run("ajpcore", "--version", silent=True) or ""
    if "pure Python core" not in version:
        session.error(f"a pure install reports {version.strip()!r}")


@nox.session(python=TOOLS_PYTHON)
def mypy(session: nox.Session) -> None:
    """``mypy --strict -p ajpcore`` (configuration in pyproject.toml)."""
    _clean_env(session)
    session.install("mypy>=1.11", ".[strategies]")
    session.run("mypy", "--strict", "-p", "ajpcore")


def _venv_outside(session: nox.Session, where: Path, artifact: str, env: dict[str, str]) -> Path:
    """A fresh venv in ``where`` with ``artifact`` installed; its bin directory."""
    session.run("python", "-m", "venv", str(where))
    session.run(str(where / "bin" / "python"), "-m", "pip", "install", artifact, env=env, external=True)
    return where / "bin"


@nox.session(python=TOOLS_PYTHON)
def package(session: nox.Session) -> None:
    """Build sdist and wheel; install each outside the clone, run the demo and the bundled conformance pack."""
    _clean_env(session)
    session.install("build")
    work = Path(tempfile.mkdtemp(prefix="ajpcore-package-"))
    session.run("python", "-m", "build", "--outdir", str(work / "dist"), str(ROOT))
    (wheel,) = glob.glob(str(work / "dist" / "*.whl"))
    (sdist,) = glob.glob(str(work / "dist" / "*.tar.gz"))
    session.chdir(work)  # outside the clone: nothing can import the source tree
    cases = [
        ("wheel", wheel, {}, "native core"),
        ("sdist-no-compiler", sdist, {"CC": "/bin/false"}, "pure Python core (no compiled extension"),
    ]
    for name, artifact, env, expected in cases:
        bin_dir = _venv_outside(session, work / name, artifact, env)
        version = session.run(str(bin_dir / "ajpcore"), "--version", silent=True, external=True) or ""
        session.log(f"{name}: {version.strip()}")
        if expected not in version:
            session.error(f"{name}: expected {expected!r} in `ajpcore --version`, got {version.strip()!r}")
        session.run(str(bin_dir / "ajpcore"), "demo", external=True)
        # The conformance pack ships inside the package: run it, export it, run the copy (issue 12).
        session.run(str(bin_dir / "ajpcore"), "conformance", "run", external=True)
        session.run(str(bin_dir / "ajpcore"), "conformance", "export", str(work / name / "pack"), external=True)
        session.run(str(bin_dir / "ajpcore"), "conformance", "run", str(work / name / "pack"), external=True)
    # The pure install refuses AJPCORE_REQUIRE_EXTENSIONS with a message naming the native core.
    refusal = session.run(
        str(work / "sdist-no-compiler" / "bin" / "python"), "-c", "import ajpcore",
        env={"AJPCORE_REQUIRE_EXTENSIONS": "1"}, success_codes=[1], silent=True, external=True,
    ) or ""
    if "native core is not usable" not in refusal or "partially initialized" in refusal:
        session.error(f"AJPCORE_REQUIRE_EXTENSIONS on a pure install said: {refusal.strip()[-400:]}")
    session.log("AJPCORE_REQUIRE_EXTENSIONS on the pure install: " + refusal.strip().splitlines()[-1])


# --- fuzz: coverage-guided fuzzing of the native core (issue 20 §5) ----------------------------
# tests/fuzz/build_native.py builds ajpcore._core_c with clang-14 (ASan + UBSan + libFuzzer coverage) in a
# scratch dir; tests/fuzz/run_all.py runs every harness there for FUZZ_SECONDS each, two at a time,
# on the committed seed corpus and regression inputs (tests/fuzz/corpus, tests/fuzz/regressions).
# A crash, a sanitizer report or a twin disagreement fails the job.  Whole job: 3-4 minutes
# (budget 8).  .ci/run installs clang-14 and libclang-rt-14-dev when they are missing.
FUZZ_SECONDS = 50
"""Seconds each fuzz target runs in CI (6 targets, 2 at a time)."""


@nox.session(python=TOOLS_PYTHON)
def fuzz(session: nox.Session) -> None:
    """Build the sanitized, coverage-instrumented native core and fuzz every harness for a fixed time."""
    _clean_env(session)
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    # The package's run-time dependencies and the fuzz extra; ajpcore itself is imported from
    # the instrumented scratch build (PYTHONPATH), never installed here.
    session.install(*meta["dependencies"], *meta["optional-dependencies"]["fuzz"])
    build_dir = Path(tempfile.mkdtemp(prefix="ajpcore-fuzz-build-"))
    session.run("python", str(ROOT / "tests" / "fuzz" / "build_native.py"), "--build-dir", str(build_dir))
    session.run(
        "python", str(ROOT / "tests" / "fuzz" / "run_all.py"), "--build-dir", str(build_dir),
        "--seconds", str(FUZZ_SECONDS), "--jobs", "2", "--work", str(build_dir / "run"),
    )
# --- end fuzz -----------------------------------------------------------------------------------
