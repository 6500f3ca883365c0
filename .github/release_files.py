"""The release's file-set check: dist/ holds exactly the files a release of this version ships.

    python .github/release_files.py DIST_DIR

Expected: the sdist, the pure ``py3-none-any`` wheel, and one wheel per build identifier that
cibuildwheel lists from pyproject.toml's ``[tool.cibuildwheel]`` for each platform and
architecture the release workflow builds (``TARGETS``, the workflow's matrix), each of the
version in ajpcore/_version.py.  Anything missing, extra, or twice is listed and the exit status
is 1, so nothing is published from an incomplete or stray set.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = [("linux", "x86_64"), ("linux", "aarch64"), ("macos", "x86_64"), ("macos", "arm64"), ("windows", "AMD64")]
"""(platform, architecture) of each wheels job in .github/workflows/release.yml."""


def version() -> str:
    text = (ROOT / "ajpcore" / "_version.py").read_text("utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if match is None:
        raise SystemExit("ajpcore/_version.py has no __version__ line")
    return match.group(1)


def identifiers() -> list[str]:
    found = []
    for platform, arch in TARGETS:
        listed = subprocess.run(
            [sys.executable, "-m", "cibuildwheel", "--print-build-identifiers", "--platform", platform, "--archs", arch],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout.split()
        if not listed:
            raise SystemExit(f"cibuildwheel lists no build for {platform} {arch}")
        found += listed
    return found


def pattern(identifier: str, ver: str) -> str:
    """The wheel file name of a build identifier (``cp312-manylinux_x86_64``), as a glob."""
    python, platform = identifier.split("-", 1)
    kind, _, arch = platform.partition("_")
    tag = {
        "manylinux": f"manylinux*_{arch}",
        "musllinux": f"musllinux_*_{arch}",
        "macosx": f"macosx_*_{arch}",
        "win": f"win_{arch}",
    }[kind]
    return f"ajpcore-{ver}-{python}-{python}-{tag}.whl"


def main(dist: Path) -> int:
    ver = version()
    files = sorted(p.name for p in dist.iterdir() if p.is_file())
    expected = {f"ajpcore-{ver}.tar.gz": f"ajpcore-{ver}.tar.gz", "pure": f"ajpcore-{ver}-py3-none-any.whl"}
    expected.update((identifier, pattern(identifier, ver)) for identifier in identifiers())
    problems = []
    matched = set()
    for name, glob in expected.items():
        hits = fnmatch.filter(files, glob)
        if len(hits) != 1:
            problems.append(f"{name}: {len(hits)} files match {glob}: {hits}")
        matched.update(hits)
    problems += [f"unexpected file: {name}" for name in files if name not in matched]
    for line in problems:
        print(f"release_files: {line}")
    print(f"release_files: {len(files)} files, {len(expected)} expected, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
