"""Run every fuzz harness for a fixed time on the instrumented build; fail on any finding.

Usage::

    python tests/fuzz/run_all.py [--build-dir /tmp/ajpcore-fuzz] [--seconds 40] [--jobs 1]
        [--targets decode,numbers:600,...] [--simd all|LEVEL,...] [--work DIR] [--nice 19] [--merge]
        [-- LIBFUZZER_FLAGS]

``--build-dir`` is what ``build_native.py`` made (built first when it has no ``env.sh``).  Each
target ``T`` runs ``tests/fuzz/fuzz_T.py`` under libFuzzer for ``--seconds`` in the
environment of ``build_native.fuzz_env`` (ASan + UBSan runtime preloaded), on a working corpus
``WORK/T`` seeded from ``tests/fuzz/corpus/T`` and ``tests/fuzz/regressions/T`` (the
committed directories are only read).  A crash, a sanitizer report, a twin
disagreement (the harness's AssertionError), a timeout (``-timeout``, 25 s an input)
or running out of memory makes libFuzzer exit non-zero: this script then prints the
tail of the log and the reproducer's path (``WORK/T/artifacts/``), and exits 1.

``--simd`` runs the targets whose native code has SIMD paths (``SIMD_TARGETS``) once per
SIMD level named (``all``: every level the instrumented core has), each with ``AJPCORE_SIMD``
forcing it, as runs named ``T@LEVEL`` that share the target's time; the other targets run
once, at the best level.

At the end it prints one line per target with libFuzzer's final figures:
executions, ``cov:`` (edges covered in the native core and, with
AJPCORE_FUZZ_INSTRUMENT_PURE=1, the pure twin), ``ft:`` (features) and the corpus size.
``--merge`` then writes the minimized working corpus back (``-merge=1`` into a fresh
``tests/fuzz/corpus/T``): how the committed seed corpus is made.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build_native  # noqa: E402

TARGETS = ("decode", "canonicalize", "numbers", "rfc3339", "hmac", "ed25519", "card", "location")
SIMD_TARGETS = ("decode", "canonicalize", "numbers")
"""The targets whose native code takes other paths at other SIMD levels (native/simd.h)."""
SIMD_LEVELS = ("scalar", "sse2", "avx2")
# The longest input libFuzzer makes per target (the number harness expands runs itself).
MAX_LEN = {"decode": 4096, "canonicalize": 4096, "numbers": 512, "rfc3339": 128, "hmac": 2048, "ed25519": 130,
           "card": 1024, "location": 256}
_FINAL = re.compile(r"#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+) corp: (\d+)/")
_STATUS = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")
_FINDING = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: libFuzzer", "== ERROR:", "Uncaught Python exception",
            "SUMMARY: UndefinedBehaviorSanitizer", "Traceback (most recent call last)")


def libfuzzer_args(target: str, seconds: Optional[int], artifacts: Path, extra: List[str]) -> List[str]:
    args = [
        f"-max_len={MAX_LEN[target]}",
        "-rss_limit_mb=3072",
        "-timeout=25",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/",
    ]
    if seconds is not None:
        args.append(f"-max_total_time={seconds}")
    return args + extra


def seed_dirs(target: str) -> List[Path]:
    return [d for d in (HERE / "corpus" / target, HERE / "regressions" / target) if d.is_dir()]


def start(run: str, build_dir: Path, work: Path, seconds: Optional[int], extra: List[str], nice: int):
    """Start the run ``T`` or ``T@LEVEL`` (target T at a forced SIMD level) in the background."""
    target, _, level = run.partition("@")
    corpus = work / run / "corpus"
    artifacts = work / run / "artifacts"
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(build_native.fuzz_env(build_dir))
    if level:
        env["AJPCORE_SIMD"] = level
    cmd = [sys.executable, str(HERE / f"fuzz_{target}.py"), *libfuzzer_args(target, seconds, artifacts, extra),
           str(corpus), *map(str, seed_dirs(target))]
    if nice:
        cmd = ["nice", "-n", str(nice), *cmd]
    log = open(work / run / "log.txt", "w")
    print(f"fuzz: {run}: {'AJPCORE_SIMD=' + level + ' ' if level else ''}{' '.join(cmd)}", flush=True)
    return subprocess.Popen(cmd, env=env, cwd=str(build_dir), stdout=log, stderr=subprocess.STDOUT), log


def figures(log_text: str) -> Dict[str, int]:
    m = _FINAL.search(log_text)
    if m is None:
        found = _STATUS.findall(log_text)
        if not found:
            return {}
        m_last = found[-1]
        return dict(zip(("execs", "cov", "ft", "corpus"), map(int, m_last)))
    return dict(zip(("execs", "cov", "ft", "corpus"), map(int, m.groups())))


def merge(target: str, build_dir: Path, work: Path) -> None:
    """Minimize WORK/T/corpus (plus the committed seeds) into a fresh tests/fuzz/corpus/T."""
    fresh = Path(tempfile.mkdtemp(prefix=f"merge-{target}-"))
    env = dict(os.environ)
    env.update(build_native.fuzz_env(build_dir))
    sources = [work / target / "corpus", *seed_dirs(target)]
    cmd = [sys.executable, str(HERE / f"fuzz_{target}.py"), "-merge=1", f"-max_len={MAX_LEN[target]}",
           "-rss_limit_mb=3072", "-timeout=25", str(fresh), *map(str, sources)]
    subprocess.run(cmd, env=env, cwd=str(build_dir), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not any(fresh.iterdir()):
        raise SystemExit(f"run_all.py: merging {target} gave no file; tests/fuzz/corpus/{target} left as it was")
    dest = HERE / "corpus" / target
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(fresh, dest)
    shutil.rmtree(fresh)
    print(f"fuzz: {target}: corpus minimized to {len(os.listdir(dest))} files in {dest}")


def simd_levels(asked: str, build_dir: Path) -> List[str]:
    """The SIMD levels ``--simd`` names (``all``: every level the instrumented core has)."""
    if not asked:
        return []
    if asked != "all":
        levels = [x.strip() for x in asked.split(",") if x.strip()]
        unknown = [x for x in levels if x not in SIMD_LEVELS]
        if unknown:
            raise SystemExit(f"run_all.py: unknown SIMD levels {unknown}; known: {', '.join(SIMD_LEVELS)}")
        return levels
    env = dict(os.environ)
    env.update(build_native.fuzz_env(build_dir))
    env.pop("AJPCORE_SIMD", None)
    probe = "import ajpcore._core_c as c; print(' '.join(c.SIMD_AVAILABLE))"
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=str(build_dir), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"run_all.py: cannot ask the instrumented core for its SIMD levels:\n{out.stderr[-2000:]}")
    return out.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--build-dir", type=Path, default=build_native.DEFAULT_BUILD_DIR)
    parser.add_argument("--seconds", type=int, default=40, help="per target (0: until -runs or forever)")
    parser.add_argument("--jobs", type=int, default=1, help="targets fuzzed at the same time")
    parser.add_argument("--targets", default=",".join(TARGETS), help="T or T:SECONDS, comma-separated")
    parser.add_argument("--simd", default="", help="all, or SIMD levels (comma-separated) to run the SIMD targets at")
    parser.add_argument("--work", type=Path, default=None, help="working corpora and logs (default: a temp dir)")
    parser.add_argument("--nice", type=int, default=0)
    parser.add_argument("--merge", action="store_true", help="write the minimized corpus back to tests/fuzz/corpus")
    parser.add_argument("extra", nargs="*", help="more libFuzzer flags, after --")
    args = parser.parse_args()
    build_dir = args.build_dir.resolve()
    if not (build_dir / "env.sh").exists():
        build_native.build(build_dir)
    # "T" or "T:SECONDS" (the long run gives each target its own time)
    own_seconds = {t.partition(":")[0]: int(t.partition(":")[2]) for t in args.targets.split(",") if ":" in t}
    targets = [t.partition(":")[0] for t in args.targets.split(",") if t]
    unknown = set(targets) - set(TARGETS)
    if unknown:
        parser.error(f"unknown targets {sorted(unknown)}; known: {', '.join(TARGETS)}")
    levels = simd_levels(args.simd, build_dir)
    if args.merge and levels:
        parser.error("--merge writes one corpus per target: run it without --simd")
    work = (args.work or Path(tempfile.mkdtemp(prefix="ajpcore-fuzz-run-"))).resolve()
    seconds = args.seconds or None
    runs: List[str] = []
    run_seconds: Dict[str, Optional[int]] = {}
    for t in targets:
        t_seconds = own_seconds.get(t, seconds)
        if levels and t in SIMD_TARGETS:
            for level in levels:  # the target's time, shared by its levels
                runs.append(f"{t}@{level}")
                run_seconds[runs[-1]] = max(1, t_seconds // len(levels)) if t_seconds else None
        else:
            runs.append(t)
            run_seconds[t] = t_seconds
    pending, running, results, failed = list(runs), [], {}, []
    began = time.monotonic()
    while pending or running:
        while pending and len(running) < args.jobs:
            t = pending.pop(0)
            proc, log = start(t, build_dir, work, run_seconds[t], args.extra, args.nice)
            running.append((t, proc, log, time.monotonic()))
        time.sleep(0.5)
        for item in list(running):
            t, proc, log, t0 = item
            if proc.poll() is None:
                continue
            running.remove(item)
            log.close()
            text = (work / t / "log.txt").read_text("utf-8", "replace")
            results[t] = dict(figures(text), seconds=round(time.monotonic() - t0), rc=proc.returncode)
            finding = [marker for marker in _FINDING if marker in text]
            if proc.returncode != 0 or finding:
                failed.append(t)
                artifacts = sorted((work / t / "artifacts").iterdir())
                print(f"fuzz: {t}: FAILED (exit {proc.returncode}; {', '.join(finding) or 'no marker'}); "
                      f"reproducers: {[str(a) for a in artifacts]}\n----- tail of {work / t / 'log.txt'} -----")
                print(text[-6000:])
                print("-----")
            else:
                print(f"fuzz: {t}: ok {results[t]}", flush=True)
    print(f"fuzz: {'target':<19} {'execs':>12} {'exec/s':>8} {'cov':>6} {'ft':>7} {'corpus':>7} {'s':>6}  status")
    total = 0
    for t in runs:
        r = results.get(t, {})
        execs = r.get("execs", 0)
        total += execs
        rate = execs // max(1, r.get("seconds", 1))
        status = "FAILED" if t in failed else "ok"
        print(f"fuzz: {t:<19} {execs:>12} {rate:>8} {r.get('cov', 0):>6} {r.get('ft', 0):>7} {r.get('corpus', 0):>7} "
              f"{r.get('seconds', 0):>6}  {status}")
    print(f"fuzz: total {total} executions in {round(time.monotonic() - began)} s; work dir {work}")
    if args.merge and not failed:
        for t in targets:
            merge(t, build_dir, work)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
