"""Line coverage of ``native/`` from the test suite (gcc ``--coverage`` + gcov).

Usage (from the repository root; the Python running it needs Cython, setuptools and the
``test`` extra, as the README's test command installs them)::

    python tests/fuzz/native_coverage.py [--work /tmp/ajpcore-cov] [PYTEST_ARGS...]

1. copies the package sources, ``tests/`` and ``bench/`` into ``--work`` (the checkout is
   not touched) and builds ``ajpcore._core_c`` in place with ``gcc --coverage -O0``,
   keeping the object files (``build_ext --build-temp``) so their ``.gcno``/``.gcda``
   notes survive the build;
2. runs pytest there (default arguments: ``--benchmark-disable -q -p no:randomly -x``;
   anything after the options replaces them) with that build first on ``PYTHONPATH``
   and ``AJPCORE_REQUIRE_EXTENSIONS=1``, so the suite runs on the native core;
3. runs ``gcov --json-format`` on the object and maps the counts to source lines:
   the headers (``native/*.h``) are C and gcov reports them by line; the Cython sources
   (``_core_c.pyx``, ``native/*.pxi``) are mapped through the ``/* "native/x.pxi":N``
   comments Cython writes above the C code of each source line (what Cython's own
   coverage plugin reads), and their verbatim C (``cdef extern from *`` blocks), which
   Cython copies into the C file without such comments, by finding its text there.  A source line is executable when some C line mapped to it
   is, covered when one of those ran;
4. prints one line per file (executable lines, covered lines, percent) and the total, and
   writes ``uncovered.txt`` in ``--work``: every executable line that never ran, with its
   text.  Exits with pytest's status when the suite failed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections import defaultdict
from pathlib import Path
from typing import Dict, Set, Tuple

ROOT = Path(__file__).resolve().parents[2]
_MARK = re.compile(r'^\s*/\* "(native/[^"]+|[^"]*_core_c\.pyx)":(\d+)\s*$')


def build(work: Path) -> Path:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("*.so", "*.c", "__pycache__", "*.pyc", "build", ".hypothesis")
    for name in ("ajpcore", "native", "tests", "bench", "conformance"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, work / name, ignore=ignore)
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "CHANGELOG.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, work / name)
    env = dict(os.environ, CC="gcc", LDSHARED="gcc -shared", CFLAGS="--coverage -O0 -g", LDFLAGS="--coverage",
               AJPCORE_REQUIRE_EXTENSIONS="1")
    env.pop("AJPCORE_NO_EXTENSIONS", None)
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace", "--force", "--build-temp",
                    str(work / "objects")], cwd=work, env=env, check=True)
    (gcno,) = list((work / "objects").rglob("_core_c*.gcno"))
    return gcno


def run_tests(work: Path, pytest_args) -> int:
    env = dict(os.environ, PYTHONPATH=str(work), AJPCORE_REQUIRE_EXTENSIONS="1")
    env.pop("AJPCORE_NO_EXTENSIONS", None)
    cmd = [sys.executable, "-m", "pytest", *pytest_args]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=work, env=env, check=False).returncode


def gcov_lines(work: Path, gcno: Path) -> Dict[str, Dict[int, int]]:
    """{source file as gcov names it: {line: count}} for every file the object's code came from."""
    out = work / "gcov"
    out.mkdir(exist_ok=True)
    subprocess.run(["gcov", "--json-format", "--object-directory", str(gcno.parent), str(gcno)],
                   cwd=out, check=True, stdout=subprocess.DEVNULL)
    lines: Dict[str, Dict[int, int]] = defaultdict(dict)
    for path in out.glob("*.gcov.json.gz"):
        data = json.loads(gzip.decompress(path.read_bytes()))
        for f in data["files"]:
            for ln in f["lines"]:
                table = lines[f["file"]]
                table[ln["line_number"]] = table.get(ln["line_number"], 0) + ln["count"]
    return lines


def map_cython(c_file: Path, c_counts: Dict[int, int]) -> Dict[str, Dict[int, int]]:
    """Counts of the C lines attributed to each Cython source line (the ``/* "f":N`` comments)."""
    mapped: Dict[str, Dict[int, int]] = defaultdict(dict)
    current: Tuple[str, int] = ("", 0)
    for number, text in enumerate(c_file.read_text("utf-8", "replace").splitlines(), 1):
        m = _MARK.match(text)
        if m:
            current = (m.group(1), int(m.group(2)))
            continue
        if current[0] and number in c_counts:
            table = mapped[current[0]]
            table[current[1]] = max(table.get(current[1], 0), c_counts[number])
    return mapped


def _verbatim_blocks(lines):
    """(first source line number, lines) of each ``cdef extern from *:`` C block of a Cython file."""
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("cdef extern from *") and i + 1 < len(lines) and lines[i + 1].strip() == '"""':
            j = i + 2
            while j < len(lines) and lines[j].strip() != '"""':
                j += 1
            blocks.append((i + 3, lines[i + 2 : j]))
            i = j
        i += 1
    return blocks


def map_verbatim(c_lines, c_counts: Dict[int, int], source_lines) -> Dict[int, int]:
    """Counts of a Cython file's verbatim C (``cdef extern from *`` blocks), found in the C file by text."""
    table: Dict[int, int] = {}
    for first_no, block in _verbatim_blocks(source_lines):
        wanted = [(first_no + k, text.strip()) for k, text in enumerate(block) if text.strip()]
        if not wanted:
            continue
        for start in (n for n, text in enumerate(c_lines) if text.strip() == wanted[0][1]):
            pairs, j = [], start
            for src_no, text in wanted:
                while j < len(c_lines) and not c_lines[j].strip():
                    j += 1
                if j >= len(c_lines) or c_lines[j].strip() != text:
                    break
                pairs.append((src_no, j + 1))
                j += 1
            else:
                for src_no, c_no in pairs:
                    if c_no in c_counts:
                        table[src_no] = max(table.get(src_no, 0), c_counts[c_no])
                break
    return table


def report(work: Path, gcno: Path) -> Dict[str, Tuple[int, int]]:
    counts = gcov_lines(work, gcno)
    c_file = work / "native" / "_core_c.c"
    per_file: Dict[str, Dict[int, int]] = {}
    for name, table in counts.items():
        path = Path(name) if os.path.isabs(name) else (work / name)
        if path.suffix == ".h" and path.parent.name == "native":
            per_file[f"native/{path.name}"] = table
        elif path.resolve() == c_file.resolve() or path.name == "_core_c.c":
            for src, t in map_cython(c_file, table).items():
                key = src if src.startswith("native/") else f"native/{Path(src).name}"
                per_file[key] = t
            c_lines = c_file.read_text("utf-8", "replace").splitlines()
            for source in sorted((work / "native").glob("*.p[xy][xi]")):
                key = f"native/{source.name}"
                extra = map_verbatim(c_lines, table, source.read_text("utf-8").splitlines())
                if extra:
                    merged = dict(per_file.get(key, {}))
                    merged.update(extra)
                    per_file[key] = merged
    summary: Dict[str, Tuple[int, int]] = {}
    uncovered = []
    for key in sorted(per_file):
        table = per_file[key]
        source = (work / key).read_text("utf-8", "replace").splitlines()
        missed: Set[int] = {n for n, c in table.items() if c == 0}
        summary[key] = (len(table), len(table) - len(missed))
        for n in sorted(missed):
            uncovered.append(f"{key}:{n}: {source[n - 1].strip() if n <= len(source) else ''}")
    (work / "uncovered.txt").write_text("\n".join(uncovered) + "\n", "utf-8")
    total_lines = sum(a for a, _ in summary.values())
    total_hit = sum(b for _, b in summary.values())
    print(f"{'file':<32} {'lines':>6} {'covered':>8} {'percent':>8}")
    for key, (n, hit) in summary.items():
        print(f"{key:<32} {n:>6} {hit:>8} {100.0 * hit / max(1, n):>7.1f}%")
    print(f"{'total':<32} {total_lines:>6} {total_hit:>8} {100.0 * total_hit / max(1, total_lines):>7.1f}%")
    print(f"uncovered lines: {work / 'uncovered.txt'}")
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/ajpcore-cov"))
    parser.add_argument("--report-only", action="store_true", help="reuse --work's build and counts")
    args, pytest_args = parser.parse_known_args()
    work = args.work.resolve()
    status = 0
    if args.report_only:
        (gcno,) = list((work / "objects").rglob("_core_c*.gcno"))
    else:
        gcno = build(work)
        status = run_tests(work, pytest_args or ["--benchmark-disable", "-q", "-p", "no:randomly", "-x"])
    report(work, gcno)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    assert (work / "ajpcore" / f"_core_c{suffix}").exists()
    return status


if __name__ == "__main__":
    sys.exit(main())
