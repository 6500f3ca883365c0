"""CI jobs (``bash .ci/run`` runs each one; ``nox -l`` lists them, ``nox -s NAME`` runs one).

- ``tests-3.X`` for every ``Programming Language :: Python :: 3.X`` classifier in
  pyproject.toml: a fresh venv, the README's test command verbatim, native core
  required (``AJPCORE_REQUIRE_EXTENSIONS=1``).  Property tests run at full size on
  ``FULL_SIZE_PYTHON`` and at a fifth elsewhere (``AJPCORE_HYPOTHESIS_SIZE``).
  A declared version missing from the machine fails, never skips.
- ``pure``: the same command on a pure install (``AJPCORE_NO_EXTENSIONS=1``), benches once.
- ``mypy``: ``mypy --strict -p ajpcore``.
- ``callgrind``: instructions per call of the hot paths under valgrind, ajpcore against orjson;
  fails when a ratio is more than 3 % above ``bench/callgrind_baseline.json``.
- ``simd``: the decode and canonicalize twin tests on every SIMD level of the native core
  (``AJPCORE_SIMD``), and on a core built with ``-DAJPCORE_NO_SIMD``.
- ``package``: ``python -m build``; the wheel, and the sdist built without a compiler,
  each installed in a fresh venv outside the clone, run ``ajpcore --version`` and the demo.
- ``docs``: the documentation site (mkdocs.yml, docs/), built ``--strict``, then checked by
  tests/test_docs_site.py (pages, nav, links, API names, headless Chromium) and
  tests/test_docs_snippets.py (every ``python`` block of every page runs).
- ``a2a_interop``: ``ajpcore.a2a`` against the pinned A2A SDKs (a2a-python in its own venv,
  @a2a-js/sdk from ``.ci/run``'s npm ci of tests/interop-a2a).

- ``fuzz``: the native core built with clang (ASan + UBSan + libFuzzer coverage), every
  harness of tests/fuzz fuzzed for a fixed time on the committed corpus (tests/fuzz/README.md).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
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


SWITCHES = ("AJPCORE_NO_EXTENSIONS", "AJPCORE_REQUIRE_EXTENSIONS", "AJPCORE_HYPOTHESIS_SIZE", "AJPCORE_A2A_INTEROP")


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
    session.install("mypy>=1.11", ".[strategies,redis]")  # redis-py ships its types (py.typed)
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


# --- callgrind: instruction counts against a committed baseline (issue 23) --------------------
# Wall clock on a shared machine moves by tens of percent; instructions per call do not.
# bench/callgrind.py counts them under `valgrind --tool=callgrind` for decode and canonicalize
# (every bench fixture but mixed8m), JobOffer.from_json + verify and receive_offer, for ajpcore
# and orjson in the same process, and fails when an ajpcore/orjson ratio is more than 3 % above
# bench/callgrind_baseline.json.  The versions that shape the counts are pinned from that
# file's "pins" (orjson, ssrjson, and the Cython that generates the native core's C); the
# native core is built without build isolation so the pinned Cython is the one used.
# A new baseline (`nox -s callgrind -- --write`: the same configuration as the check) is a
# commit that says why.  About 2 minutes: the build, then ~40 s under valgrind.
CALLGRIND_BASELINE = ROOT / "bench" / "callgrind_baseline.json"


@nox.session(python=TOOLS_PYTHON)
def callgrind(session: nox.Session) -> None:
    """Instructions per call (callgrind) of the hot paths, ajpcore/orjson against the committed baseline."""
    _clean_env(session)
    if shutil.which("valgrind") is None:
        session.error("valgrind is not installed (.ci/run installs it with apt-get)")
    pins = json.loads(CALLGRIND_BASELINE.read_text("utf-8"))["pins"]
    session.install(f"Cython=={pins['Cython']}", "setuptools>=77", "wheel")
    session.install("--no-build-isolation", ".")
    session.install(f"orjson=={pins['orjson']}", "rfc8785>=0.1.4")
    if "ssrjson" in pins:  # wheels for Linux x86_64 only: elsewhere its column stays empty
        session.install(f"ssrjson=={pins['ssrjson']}; sys_platform == 'linux' and platform_machine == 'x86_64'")
    # `nox -s callgrind -- --write` records a new baseline in this same configuration.
    mode = "--write" if session.posargs == ["--write"] else "--check"
    session.run("python", "bench/callgrind.py", mode, str(CALLGRIND_BASELINE), env={"PYTHONHASHSEED": "0"})
# --- end callgrind --------------------------------------------------------------------------


# --- simd: every SIMD path of the native core (issue 23) ---------------------------------------
# native/simd.h: an x86-64 build has the sse2 paths compiled in and takes the avx2 ones when the
# CPU has AVX2 (picked at import; AJPCORE_SIMD=sse2 keeps the sse2 ones); a build with
# -DAJPCORE_NO_SIMD has the scalar paths only.  The tests-3.X jobs run the best level; this job
# runs the twin-differential decode and canonicalize tests once per run-time level of the usual
# build, each forced, then on a -DAJPCORE_NO_SIMD build.  A level the CPU lacks skips with the
# reason, and fails under CI=true.  About 3 minutes at the quick hypothesis size.
SIMD_TESTS = [
    "tests/test_backend.py",
    "tests/test_decode_fastpaths.py",
    "tests/test_decode_small_paths.py",
    "tests/test_decode_text_names.py",
    "tests/test_decode_utf8_simd.py",
    "tests/test_decode_long_fractions.py",
    "tests/test_decode_exponents.py",
    "tests/test_decode_windows.py",
    "tests/test_decode_properties.py",
    "tests/test_jsontestsuite.py",
    "tests/test_canonical_fastpaths.py",
    "tests/test_canonical_properties.py",
    "tests/test_number_format.py",
]
SIMD_LEVELS = ("scalar", "sse2", "avx2")
"""As ``ajpcore._core_c.SIMD_LEVELS``: the job checks the installed core says the same."""


@nox.session(python=TOOLS_PYTHON)
def simd(session: nox.Session) -> None:
    """The decode and canonicalize twin tests on every SIMD level (AJPCORE_SIMD), and on a -DAJPCORE_NO_SIMD build."""
    _clean_env(session, AJPCORE_REQUIRE_EXTENSIONS="1", AJPCORE_HYPOTHESIS_SIZE="quick")
    session.install("pytest>=7", "hypothesis>=6.100", "orjson>=3.9")  # orjson: a peer the property tests compare
    session.install("--no-cache-dir", ".")  # built here: no wheel cached by another job's flags
    session.chdir(tempfile.mkdtemp(prefix="ajpcore-simd-"))  # the installed core, not the source tree
    probe = "import ajpcore._core_c as c; print(' '.join(c.SIMD_LEVELS)); print(' '.join(c.SIMD_AVAILABLE))"
    known, available = (session.run("python", "-c", probe, silent=True) or "").strip().splitlines()
    if tuple(known.split()) != SIMD_LEVELS:
        session.error(f"the native core's SIMD levels are {known!r}, this job knows {SIMD_LEVELS}")
    pytest = ("pytest", "-q", "-p", "no:randomly", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
              *[str(ROOT / t) for t in SIMD_TESTS])
    ran = []
    for level in SIMD_LEVELS[1:]:  # scalar: the -DAJPCORE_NO_SIMD build below
        if level not in available.split():
            message = f"SIMD level {level}: this CPU or build does not have it (available: {available})"
            if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on"):
                session.error(message + "; under CI=true every level must run")
            session.warn(message + ": skipped")
            continue
        session.log(f"SIMD level {level} (AJPCORE_SIMD={level})")
        session.run(*pytest, env={"AJPCORE_SIMD": level})
        ran.append(level)
    session.log("SIMD level scalar: a core built with -DAJPCORE_NO_SIMD")
    session.install("--no-cache-dir", "--force-reinstall", "--no-deps", str(ROOT), env={"CFLAGS": "-DAJPCORE_NO_SIMD"})
    available = (session.run("python", "-c", probe, silent=True) or "").strip().splitlines()[1]
    if available != "scalar":
        session.error(f"the -DAJPCORE_NO_SIMD build reports the levels {available!r}, not 'scalar'")
    session.run(*pytest, env={"AJPCORE_SIMD": "scalar"})
    session.log(f"SIMD levels tested: {', '.join(ran + ['scalar'])}")
# --- end simd --------------------------------------------------------------------------------
# --- docs: the documentation site (issue 24) ------------------------------------------------------
# Builds the site with the pinned docs/requirements.txt (warnings are errors: mkdocs.yml sets
# strict, and validation of links and anchors), then runs the site checks and every page's
# examples on the source tree's pure core (the native core is tested by the tests-3.X jobs; not
# compiling it here keeps the job short). Chromium (Debian's `chromium`) must be on PATH:
# .ci/run installs it when missing. Screenshots land in AJPCORE_DOCS_SCREENSHOTS or a temporary
# directory the test prints.
@nox.session(python=TOOLS_PYTHON)
def docs(session: nox.Session) -> None:
    """Build the documentation site strictly; check its pages, links and API; run every example; open it in Chromium."""
    _clean_env(session, AJPCORE_NO_EXTENSIONS="1")
    runtime = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    session.install("-r", str(ROOT / "docs" / "requirements.txt"), *runtime, "pytest>=7", "hypothesis>=6.100")
    site = Path(tempfile.mkdtemp(prefix="ajpcore-site-"))
    session.chdir(ROOT)
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), env={"NO_MKDOCS_2_WARNING": "1"})
    session.log(f"site built in {site}")
    env = {"AJPCORE_DOCS_SITE": str(site), "PYTHONPATH": str(ROOT)}
    pytest = ("python", "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider")
    session.run(*pytest, "tests/test_docs_snippets.py", env=env)
    session.run(*pytest, "-s", "tests/test_docs_site.py", env=env)  # -s: it prints where the screenshots are
# --- end docs ---------------------------------------------------------------------------------------

# --- examples: the receivers of examples/ behind real servers (issue 21) -------------------------
# FastAPI under `uvicorn --workers 2` and Flask under `gunicorn -w 2 --threads 4`, on 127.0.0.1
# free ports, sharing a SQLite store (and Redis when AJPCORE_TEST_REDIS_URL is set), driven by the
# Node sender (AJPCORE_INTEROP_NODE_MODULES, set by .ci/run) and from Python; then
# `mypy --strict examples/`.  Its own venv: the web frameworks are no dependency of ajpcore.
EXAMPLE_PACKAGES = ("fastapi", "uvicorn", "flask", "gunicorn", "httpx", "redis", "mypy>=1.11")


@nox.session(python=TOOLS_PYTHON)
def examples(session: nox.Session) -> None:
    """examples/ behind uvicorn and gunicorn with 2 workers each, driven from Node and Python; mypy --strict."""
    _clean_env(session, AJPCORE_EXAMPLES="1")
    session.install(".[test]", *EXAMPLE_PACKAGES)
    session.run("mypy", "--strict", "examples/")
    session.chdir(str(Path(tempfile.mkdtemp(prefix="ajpcore-examples-"))))  # the installed ajpcore, not the tree
    session.run("python", "-m", "pytest", str(ROOT / "tests" / "test_receiver_examples.py"), "-q", "-s",
                "-p", "no:randomly", "-p", "no:cacheprovider", f"--rootdir={ROOT}")
# --- end examples ------------------------------------------------------------------------------

# --- A2A SDK interop (issue 22) ------------------------------------------------------------------
# a2a-python in a venv of its own, so its dependencies (protobuf, PyJWT, httpx, pydantic...) never
# enter the main test venvs.  Runs tests/test_a2a_interop.py with AJPCORE_A2A_INTEROP=1, under which
# a missing SDK fails instead of skipping; the Node half uses the npm ci of tests/interop-a2a that
# .ci/run names in AJPCORE_A2A_NODE_MODULES (without node the job fails: CI must check both SDKs).
A2A_SDK_PIN = "a2a-sdk[signing]==1.3.0"


@nox.session(python=TOOLS_PYTHON)
def a2a_interop(session: nox.Session) -> None:
    """ajpcore.a2a against a2a-python (pinned, this venv) and @a2a-js/sdk (pinned, npm)."""
    _clean_env(session, AJPCORE_REQUIRE_EXTENSIONS="1", AJPCORE_A2A_INTEROP="1")
    session.install(".", "pytest>=7", "hypothesis>=6.100", "pytest-benchmark>=4", A2A_SDK_PIN)
    session.run("pytest", "-q", "-p", "no:randomly", "tests/test_a2a_interop.py", "bench/test_a2a.py", "--benchmark-disable")
# --- end A2A SDK interop ---------------------------------------------------------------------------

# --- fuzz: coverage-guided fuzzing of the native core (issue 20 §5) ----------------------------
# tests/fuzz/build_native.py builds ajpcore._core_c with clang-14 (ASan + UBSan + libFuzzer coverage) in a
# scratch dir; tests/fuzz/run_all.py runs every harness there for FUZZ_SECONDS each, two at a time,
# on the committed seed corpus and regression inputs (tests/fuzz/corpus, tests/fuzz/regressions).
# The decode, canonicalize and number targets run at every SIMD level (native/simd.h): sse2 and
# avx2 share their time on that build, then a -DAJPCORE_NO_SIMD build runs them at the scalar
# level.  A crash, a sanitizer report or a twin disagreement fails the job.  Whole job: about 5
# minutes (budget 8).  .ci/run installs clang-14 and libclang-rt-14-dev when they are missing.
FUZZ_SECONDS = 50
"""Seconds each fuzz target runs in CI (6 targets, 2 at a time; a SIMD target's time is shared by its levels)."""
FUZZ_SCALAR_SECONDS = 20
"""Seconds each SIMD target runs again on the -DAJPCORE_NO_SIMD build (the scalar level)."""


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
    # The SIMD targets share their time between the levels the build runs (sse2, avx2) ...
    session.run(
        "python", str(ROOT / "tests" / "fuzz" / "run_all.py"), "--build-dir", str(build_dir),
        "--seconds", str(FUZZ_SECONDS), "--jobs", "2", "--simd", "all", "--work", str(build_dir / "run"),
    )
    # ... and run again on a -DAJPCORE_NO_SIMD build, the scalar level (native/simd.h).
    scalar_dir = Path(tempfile.mkdtemp(prefix="ajpcore-fuzz-build-scalar-"))
    session.run("python", str(ROOT / "tests" / "fuzz" / "build_native.py"), "--build-dir", str(scalar_dir),
                "--cflags=-DAJPCORE_NO_SIMD")
    session.run(
        "python", str(ROOT / "tests" / "fuzz" / "run_all.py"), "--build-dir", str(scalar_dir),
        "--seconds", str(FUZZ_SCALAR_SECONDS), "--jobs", "2", "--simd", "scalar",
        "--targets", "decode,canonicalize,numbers", "--work", str(scalar_dir / "run"),
    )
# --- end fuzz -----------------------------------------------------------------------------------
