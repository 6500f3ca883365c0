"""Every test file and the CI jobs that run it, derived from a revision's noxfile.py and pyproject.toml.

    python .ci/coverage.py BEFORE [AFTER]    (git revisions; AFTER defaults to the working tree)

Reads each revision's noxfile.py with ``ast`` (nothing is imported or run): a job that runs
the README's test command (``readme_test_command()``) runs every ``test_*.py`` under
pyproject.toml's ``testpaths``; any other job runs the ``tests/...py`` and ``bench/...py``
paths its body names (string literals, ``ROOT / "tests" / "x.py"`` chains, and module-level
lists of such paths it refers to, like ``SIMD_TESTS``); ``tests/fuzz/run_all.py`` runs every
``tests/fuzz/fuzz_*.py`` harness.  A job defined with ``python=PYTHONS`` is one job per
``Programming Language :: Python :: 3.X`` classifier.  Prints a Markdown table, one row per
file of either revision, and fails when a file loses a job (other than ``package``, whose
checks moved to ``wheels``) or is run by no job.  A file git sees as renamed between the two
revisions (the tests/<concept>/ move of issue 34) is one row, ``old -> new``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATH = re.compile(r"^(tests|bench)/[\w/]+\.py$")
RENAMED = {"package": "wheels"}
"""Jobs folded into another (issue 34): a file the old job ran counts as kept if the new one runs it."""
NOTES = """\
A README-command job collects every file; some skip there by design and run in their own job
(test_docs_site.py without AJPCORE_DOCS_SITE, test_receiver_examples.py without AJPCORE_EXAMPLES,
test_a2a_interop.py's a2a-python half without the SDK).  `simd` ran its files at the avx2, sse2 and
scalar levels on main; now at sse2 and scalar, avx2 being the level of the tests-3.X jobs (the wheels
job asserts every wheel runs it).  `package` (main: the wheel and the compiler-less sdist installed
outside the clone, demo, conformance pack) is folded into `wheels`, which checks the same and more."""


def _read(rev: str | None, path: str) -> str:
    if rev is None:
        return (ROOT / path).read_text("utf-8")
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def _files(rev: str | None) -> list[str]:
    if rev is None:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
    else:
        out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
    return sorted(set(out.split()))


def _path_of(node: ast.AST) -> str | None:
    """``"tests/x.py"``, or ``ROOT / "tests" / "x.py"`` joined, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        parts = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            right = node.right
            if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
                return None
            parts.append(right.value)
            node = node.left
        return "/".join(reversed(parts))
    return None


def jobs(rev: str | None) -> dict[str, set[str]]:
    """Job name -> the test files it runs, at ``rev`` (None: the working tree)."""
    files = _files(rev)
    project = tomllib.loads(_read(rev, "pyproject.toml"))
    pythons = [c.rsplit(" :: ", 1)[1] for c in project["project"]["classifiers"]
               if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    testpaths = project["tool"]["pytest"]["ini_options"]["testpaths"]
    suite = {f for f in files if any(f.startswith(p + "/") for p in testpaths) and re.search(r"(^|/)test_\w+\.py$", f)}
    harnesses = {f for f in files if re.fullmatch(r"tests/fuzz/fuzz_\w+\.py", f)}
    tree = ast.parse(_read(rev, "noxfile.py"))
    lists: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            paths = {p for n in ast.walk(node.value) if (p := _path_of(n)) and PATH.match(p)}
            if paths:
                lists[node.targets[0].id] = paths
    result: dict[str, set[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        session = [d for d in node.decorator_list if isinstance(d, ast.Call) and ast.unparse(d.func) == "nox.session"]
        if not session:
            continue
        runs: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and ast.unparse(sub.func) == "readme_test_command":
                runs |= suite
            elif isinstance(sub, ast.Name) and sub.id in lists:
                runs |= lists[sub.id]
            elif (path := _path_of(sub)) is not None:
                if path == "tests/fuzz/run_all.py":
                    runs |= harnesses
                elif PATH.match(path):
                    runs.add(path)
        python = {k.arg: ast.unparse(k.value) for k in session[0].keywords}.get("python")
        names = [f"{node.name}-{v}" for v in pythons] if python == "PYTHONS" else [node.name]
        for name in names:
            result[name] = runs
    return result


def renames(before_rev: str, after_rev: str | None) -> dict[str, str]:
    """New path -> old path of every test file renamed from ``before_rev`` to ``after_rev``.

    Each commit's renames, chained (``a -> b`` then ``b -> c`` is ``a -> c``): a file that was
    moved in one commit and much edited in others is still found, where a single diff of the two
    revisions would see a deletion and an addition.  The working tree's own renames (staged or
    not) come from one last diff against HEAD.
    """
    log = subprocess.run(["git", "log", "--reverse", "-M", "--name-status", "--diff-filter=R", "--format=",
                          f"{before_rev}..{after_rev or 'HEAD'}"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    if after_rev is None:
        log += subprocess.run(["git", "diff", "-M", "--name-status", "--diff-filter=R", "HEAD"],
                              cwd=ROOT, check=True, capture_output=True, text=True).stdout
    origin: dict[str, str] = {}
    for line in log.splitlines():
        if not line.strip():
            continue
        _, old, new = line.split("\t")
        origin[new] = origin.pop(old, old)
    return {new: old for new, old in origin.items() if re.search(r"(^|/)test_\w+\.py$", new)}


def main(argv: list[str]) -> int:
    before_rev = argv[1] if len(argv) > 1 else "main"
    after_rev = argv[2] if len(argv) > 2 else None
    before, after = jobs(before_rev), jobs(after_rev)
    files = sorted(set().union(*before.values(), *after.values(), *(
        {f for f in _files(r) if re.search(r"(^|/)test_\w+\.py$", f) and f.startswith(("tests/", "bench/"))}
        for r in (before_rev, after_rev))))
    moved = renames(before_rev, after_rev)
    files = [f for f in files if f not in moved.values()]
    label = after_rev or "working tree"
    print(f"| test file | jobs at {before_rev} | jobs at {label} |")
    print("|---|---|---|")
    lost = []
    for f in files:
        was = moved.get(f, f)
        old = sorted(j for j, fs in before.items() if was in fs)
        new = sorted(j for j, fs in after.items() if f in fs)
        missing = [j for j in old if j not in new and RENAMED.get(j) not in new]
        if missing or not new:
            lost.append(f"{f}: {', '.join(missing) or 'no job'}")
        name = f if was == f else f"{was} -> {f}"
        print(f"| {name} | {', '.join(old) or '-'} | {', '.join(new) or '-'} |")
    print()
    print(NOTES)
    print()
    print(f"{len(files)} files; jobs at {before_rev}: {len(before)}, at {label}: {len(after)}.")
    if lost:
        print("LOST: " + "; ".join(lost))
        return 1
    print("Every file keeps every job it had (package's checks: wheels).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
