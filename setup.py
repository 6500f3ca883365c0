"""Build the optional native core ``ajpcore._core_c`` from ``native/_core_c.pyx``.

``_core_c.pyx`` includes one ``native/<concern>.pxi`` per concern; every one of
them is a dependency, so editing any ``.pxi`` rebuilds the extension.

Metadata lives in pyproject.toml.  Without a working compiler the install
degrades to the pure-Python twin with a warning, unless
``AJPCORE_REQUIRE_EXTENSIONS=1`` makes the extension mandatory.

Release builds: no debug information (``-g0``) and a stripped shared object
(``-s``, on ELF platforms), unless ``CFLAGS`` asks for ``-g`` or a sanitizer
(the fuzz and sanitizer recipes), which is then honoured as given.  Every build
works in a fresh temporary ``build_base``: nothing from an earlier build (a
native ``.so`` in ``build/lib``) can end up in this one.
"""

import atexit
import glob
import os
import shutil
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_TRUE = {"1", "true", "yes", "on"}
REQUIRE = os.environ.get("AJPCORE_REQUIRE_EXTENSIONS", "").strip().lower() in _TRUE
SKIP = os.environ.get("AJPCORE_NO_EXTENSIONS", "").strip().lower() in _TRUE
_USER_CFLAGS = os.environ.get("CFLAGS", "").split()
DEBUG_BUILD = any(flag.startswith(("-g", "-fsanitize")) for flag in _USER_CFLAGS)


class OptionalBuildExt(build_ext):
    """build_ext that turns a compiler failure into a warning unless the extension is required."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # distutils raises several unrelated error types
            self._degrade(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._degrade(exc)

    def _degrade(self, exc):
        if REQUIRE:
            raise
        banner = "*" * 72
        sys.stderr.write(
            f"\n{banner}\nWARNING: ajpcore's native core could not be built ({exc}).\n"
            "Installing the pure-Python twin: same results, slower "
            "(`ajpcore --version` says which core runs and why).\n"
            f"{banner}\n\n"
        )


def _fresh_build_base():
    base = tempfile.mkdtemp(prefix="ajpcore-build-")
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    return base


def extensions():
    if SKIP:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        if REQUIRE:
            raise
        sys.stderr.write("WARNING: Cython is not available; installing ajpcore without its native core.\n")
        return []
    compile_args, link_args = [], []
    if os.name != "nt":
        compile_args = ["-O3"] if DEBUG_BUILD else ["-O3", "-g0"]
        if not DEBUG_BUILD and sys.platform.startswith(("linux", "freebsd")):
            link_args = ["-s"]
    ext = Extension(
        "ajpcore._core_c",
        ["native/_core_c.pyx"],
        depends=sorted(glob.glob("native/*.pxi") + glob.glob("native/*.h")),
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
    return cythonize(
        [ext],
        include_path=["native"],
        compiler_directives={"language_level": "3", "embedsignature": True},
        quiet=True,
    )


setup(
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
    options={"build": {"build_base": _fresh_build_base()}},
)
