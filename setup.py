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

``AJPCORE_BUILD_BASE=DIR`` is the exception CI asks for: build in ``DIR`` and
keep it, so a later build of the same source tree for the same Python reuses
the extension setuptools finds up to date there (its own check against every
source and ``depends`` file, saying "skipping 'ajpcore._core_c' extension
(up-to-date)").  The ``wheels`` nox job builds each Python's wheel that way from
the unpacked sdist, and the ``tests-3.X`` job's ``pip install '.[test]'`` in that
same folder installs the same compiled core instead of compiling it again.

The long description PyPI shows is README.md with its relative links (files of
the source tree, which PyPI cannot resolve) written as the file's path in text:
ajpcore has no public home page yet to make them absolute against.

``AJPCORE_NO_EXTENSIONS=1`` builds without the extension: a pure wheel
(``py3-none-any``).  ``AJPCORE_REQUIRE_EXTENSIONS=1`` makes any failure to
build the extension (no Cython, no compiler, a compile error) fail the build.
"""

import atexit
import glob
import os
import re
import shutil
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_TRUE = {"1", "true", "yes", "on"}
REQUIRE = os.environ.get("AJPCORE_REQUIRE_EXTENSIONS", "").strip().lower() in _TRUE
SKIP = os.environ.get("AJPCORE_NO_EXTENSIONS", "").strip().lower() in _TRUE
if REQUIRE and SKIP:
    sys.exit("AJPCORE_REQUIRE_EXTENSIONS and AJPCORE_NO_EXTENSIONS are both set: a build is one or the other")
_USER_CFLAGS = os.environ.get("CFLAGS", "").split()
KEPT_BUILD_BASE = os.path.abspath(os.environ["AJPCORE_BUILD_BASE"]) if os.environ.get("AJPCORE_BUILD_BASE", "").strip() else ""
DEBUG_BUILD = any(flag.startswith(("-g", "-fsanitize")) for flag in _USER_CFLAGS)


class OptionalBuildExt(build_ext):
    """build_ext that turns a compiler failure into a warning unless the extension is required."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # distutils raises several unrelated error types
            self._degrade(exc)

    def build_extension(self, ext):
        if getattr(ext, "reuse_built", False) and not self.inplace:
            # AJPCORE_BUILD_BASE holds it, newer than every native/ source (_built_core_up_to_date):
            # build_lib already has it, where the wheel or install takes it from.
            sys.stderr.write(f"ajpcore: reusing {self.get_ext_fullpath(ext.name)}: newer than every native/ source\n")
            return
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


def _build_base():
    if KEPT_BUILD_BASE:
        return KEPT_BUILD_BASE
    base = tempfile.mkdtemp(prefix="ajpcore-build-")
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    return base


def _built_core_up_to_date(base):
    """True when ``base`` (AJPCORE_BUILD_BASE) holds this Python's core, newer than every native/ source.

    Checked here, before Cython: Cython's own check also weighs its installed
    ``.pxd`` files, which a fresh isolated build environment always makes newer.
    The generated ``native/_core_c.c`` must be there too (the earlier build left it); another
    Python's build may have generated it again since (the same text), so only its presence counts.
    """
    if not base:
        return False
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = glob.glob(os.path.join(base, "lib.*", "ajpcore", "_core_c" + suffix))
    sources = glob.glob("native/*") + ["setup.py"]
    if len(built) != 1 or not os.path.exists("native/_core_c.c"):
        return False
    newest = max(os.path.getmtime(path) for path in sources if not path.endswith(".c"))
    return os.path.getmtime(built[0]) > newest


def extensions():
    if SKIP:
        return []
    compile_args, link_args = [], []
    if os.name != "nt":
        compile_args = ["-O3"] if DEBUG_BUILD else ["-O3", "-g0"]
        if not DEBUG_BUILD and sys.platform.startswith(("linux", "freebsd")):
            link_args = ["-s"]
    options = dict(
        depends=sorted(glob.glob("native/*.pxi") + glob.glob("native/*.h")),
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
    if _built_core_up_to_date(KEPT_BUILD_BASE):
        reused = Extension("ajpcore._core_c", ["native/_core_c.c"], **options)
        reused.reuse_built = True  # OptionalBuildExt compiles nothing
        return [reused]
    try:
        from Cython.Build import cythonize
    except ImportError:
        if REQUIRE:
            raise
        sys.stderr.write("WARNING: Cython is not available; installing ajpcore without its native core.\n")
        return []
    return cythonize(
        [Extension("ajpcore._core_c", ["native/_core_c.pyx"], **options)],
        include_path=["native"],
        compiler_directives={"language_level": "3", "embedsignature": True},
        quiet=True,
    )


_RELATIVE_IMAGE = re.compile(r"!\[([^\]]*)\]\((?!https?://)([^)\s]+)\)")
_RELATIVE_LINK = re.compile(r"\[([^\]]+)\]\((?!https?://|#)([^)\s]+)\)")


def pypi_readme():
    """README.md for PyPI: a relative image or link becomes its text and the path, which PyPI cannot link."""
    with open("README.md", encoding="utf-8") as f:
        text = f.read()
    text = _RELATIVE_IMAGE.sub(r"*\1* (`\2` in the source distribution)", text)
    return _RELATIVE_LINK.sub(r"\1 (`\2`)", text)


setup(
    long_description=pypi_readme(),
    long_description_content_type="text/markdown",
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
    options={"build": {"build_base": _build_base()}},
)
