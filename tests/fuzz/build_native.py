"""Build the native core for fuzzing: clang, ASan + UBSan + libFuzzer coverage, in a scratch dir.

Usage (from anywhere; the Python running it is the one the build is for, and it needs
Cython and setuptools, which ``pip install '.[fuzz]'`` brings)::

    python tests/fuzz/build_native.py [--build-dir /tmp/ajpcore-fuzz] [--cc clang-14] [--cflags=-DAJPCORE_NO_SIMD]

What it does, in ``--build-dir`` (removed and made anew; the source tree is not touched):

1. copies the package sources (``ajpcore/``, ``native/``, ``setup.py``, ``pyproject.toml``)
   of this checkout, uncommitted changes included;
2. builds ``ajpcore._core_c`` in place with ``CC=clang`` and
   ``-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined``
   (every UBSan finding aborts, so the fuzzer records it as a crash), ``-g -O1``, and
   ``--cflags`` (``-DAJPCORE_NO_SIMD``: the scalar paths of native/simd.h);
3. links ``asan_with_fuzzer.so``: clang's ASan runtime (which carries UBSan's handlers)
   without its preinit object, plus libFuzzer without ``main``, as one preloadable
   library.  This is the library atheris's native-extension guide tells to
   ``LD_PRELOAD`` (atheris builds it only when installed from source against a
   clang; its wheels do not ship it), made the way atheris's own
   ``setup_utils/merge_libfuzzer_sanitizer.sh`` makes it;
4. checks that the module is instrumented (``__asan_*`` and ``__sanitizer_cov_*``
   symbols) and imports under the preload;
5. writes ``env.sh`` (and prints it): the environment every harness runs in.

The environment (``fuzz_env``, also used by ``run_all.py``): ``LD_PRELOAD`` of that
library, ``ASAN_OPTIONS=detect_leaks=0`` (the interpreter keeps its interned objects at
exit), ``UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1``, ``PYTHONMALLOC=malloc`` (every
Python object its own malloc block, so ASan sees overruns of them) and
``PYTHONPATH=<build dir>``, where the instrumented ``ajpcore`` is.

Exits non-zero with the failing step's message when clang, its runtime or the
instrumentation is missing.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BUILD_DIR = Path(os.environ.get("AJPCORE_FUZZ_BUILD_DIR", "/tmp/ajpcore-fuzz"))
SANITIZE = "-fsanitize=address,undefined,fuzzer-no-link"
CFLAGS = f"{SANITIZE} -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
PRELOAD_NAME = "asan_with_fuzzer.so"


def _run(cmd, **kwargs) -> str:
    print("+", " ".join(shlex.quote(str(c)) for c in cmd), flush=True)
    done = subprocess.run([str(c) for c in cmd], check=False, text=True, capture_output=True, **kwargs)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-8000:])
        raise SystemExit(f"build_native.py: {cmd[0]} failed (exit {done.returncode})")
    return done.stdout


def runtime_library(cc: str, name: str) -> Path:
    """The path of clang's runtime archive ``name`` (e.g. ``libclang_rt.asan-x86_64.a``)."""
    path = Path(_run([cc, f"-print-file-name={name}"]).strip())
    if not path.is_absolute() or not path.exists():
        raise SystemExit(f"build_native.py: {cc} has no {name} (Debian: apt-get install libclang-rt-14-dev)")
    return path


def fuzz_env(build_dir: Path) -> Dict[str, str]:
    """The variables a harness runs with (on top of the caller's environment)."""
    return {
        "LD_PRELOAD": str(build_dir / PRELOAD_NAME),
        "ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1:handle_abort=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
        "PYTHONMALLOC": "malloc",
        "PYTHONPATH": str(build_dir),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def copy_sources(build_dir: Path) -> None:
    if build_dir.exists():
        shutil.rmtree(build_dir)
    build_dir.mkdir(parents=True)
    ignore = shutil.ignore_patterns("*.so", "*.c", "__pycache__", "*.pyc", "build")
    for name in ("ajpcore", "native"):
        shutil.copytree(ROOT / name, build_dir / name, ignore=ignore)
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, build_dir / name)


def build_extension(build_dir: Path, cc: str, cflags: str = "") -> Path:
    env = dict(os.environ)
    env.update(
        CC=cc,
        LDSHARED=f"{cc} -shared",
        CFLAGS=f"{CFLAGS} {cflags}".strip(),
        LDFLAGS=SANITIZE,
        AJPCORE_REQUIRE_EXTENSIONS="1",
    )
    env.pop("AJPCORE_NO_EXTENSIONS", None)
    _run([sys.executable, "setup.py", "-q", "build_ext", "--inplace", "--force"], cwd=build_dir, env=env)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = build_dir / "ajpcore" / f"_core_c{suffix}"
    if not module.exists():
        raise SystemExit(f"build_native.py: no {module} after the build")
    return module


def link_preload(build_dir: Path, cc: str) -> Path:
    """asan_with_fuzzer.so: ASan (+UBSan) runtime without preinit, and libFuzzer without main."""
    cxx = cc.replace("clang", "clang++")
    if shutil.which(cxx) is None:
        raise SystemExit(f"build_native.py: {cxx} not found (it comes with clang)")
    asan = runtime_library(cc, "libclang_rt.asan-x86_64.a")
    fuzzer = runtime_library(cc, "libclang_rt.fuzzer_no_main-x86_64.a")
    work = build_dir / "runtime"
    work.mkdir()
    stripped = work / "asan.a"
    shutil.copy2(asan, stripped)
    # A preloaded library must not carry .preinit_array (only executables may).
    _run(["ar", "d", stripped, "asan_preinit.cc.o", "asan_preinit.cpp.o"])
    out = build_dir / PRELOAD_NAME
    _run([cxx, "-shared", "-o", out, "-Wl,--whole-archive", fuzzer, stripped, "-Wl,--no-whole-archive",
          "-lpthread", "-ldl"])
    return out


def check(build_dir: Path, module: Path) -> None:
    symbols = _run(["nm", "-D", module])
    for prefix in ("__asan_", "__ubsan_handle_", "__sanitizer_cov_"):
        if prefix not in symbols:
            raise SystemExit(f"build_native.py: {module.name} has no {prefix}* symbol: not instrumented")
    env = dict(os.environ)
    env.update(fuzz_env(build_dir))
    probe = (
        "import ajpcore, ajpcore._core_c as c; assert ajpcore.BACKEND == 'c', ajpcore.BACKEND; "
        "assert c.__file__.startswith(%r), c.__file__; "
        "assert c.decode(b'[1.5, \"x\", {\"a\": null}]') == [1.5, 'x', {'a': None}]; print(c.__file__)"
    ) % str(build_dir)
    print("instrumented core:", _run([sys.executable, "-c", probe], env=env, cwd=build_dir).strip())


def write_env(build_dir: Path) -> Path:
    lines = [f"export {k}={shlex.quote(v)}" for k, v in fuzz_env(build_dir).items()]
    path = build_dir / "env.sh"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def build(build_dir: Path = DEFAULT_BUILD_DIR, cc: str = "clang-14", cflags: str = "") -> Path:
    """Build everything into ``build_dir`` (``cflags``: more compiler flags); return it."""
    if shutil.which(cc) is None:
        raise SystemExit(f"build_native.py: {cc} not found (Debian: apt-get install clang-14 libclang-rt-14-dev)")
    build_dir = build_dir.resolve()
    copy_sources(build_dir)
    module = build_extension(build_dir, cc, cflags)
    link_preload(build_dir, cc)
    check(build_dir, module)
    env_file = write_env(build_dir)
    print(f"environment ({env_file}):")
    print(env_file.read_text("utf-8"), end="")
    return build_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--build-dir", type=Path, default=DEFAULT_BUILD_DIR)
    parser.add_argument("--cc", default=os.environ.get("AJPCORE_FUZZ_CC", "clang-14"))
    parser.add_argument("--cflags", default="", help="more compiler flags (-DAJPCORE_NO_SIMD: the scalar paths)")
    args = parser.parse_args()
    build(args.build_dir, args.cc, args.cflags)


if __name__ == "__main__":
    main()
