#!/usr/bin/env python3
"""Write the AJP conformance pack: ``python conformance/generate.py [--check]``.

Builds the four files from fixed seeds and the RFC 8032 test keys, and writes them to
``conformance/`` (the pack in the repository) and ``ajpcore/conformance/pack/`` (the
copy installed with ajpcore, which ``ajpcore conformance export`` prints); the two are
byte-identical.  ``--check`` writes nothing and exits 1 if a committed file differs
from what the generator makes now.  Needs the test extras (``rfc8785``, ``cryptography``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generator import a2a, canonical, decode, envelopes, reference, signatures  # noqa: E402

VERSION = 1
BUILDERS: Dict[str, Callable[[], List[Dict[str, Any]]]] = {
    "canonical.json": canonical.build,
    "signatures.json": signatures.build,
    "decode.json": decode.build,
    "envelopes.json": envelopes.build,
    "a2a.json": a2a.build,
}
TARGETS = (HERE, HERE.parent / "ajpcore" / "conformance" / "pack")


def render(cases: List[Dict[str, Any]]) -> bytes:
    """The file's bytes: ASCII JSON, one case per line, so diffs show which cases changed."""
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise AssertionError("duplicate case ids")
    lines = [json.dumps(c, ensure_ascii=True, separators=(", ", ": ")) for c in cases]
    return ('{"version": %d, "cases": [\n' % VERSION + ",\n".join(lines) + "\n]}\n").encode("ascii")


def build() -> Dict[str, bytes]:
    """Every pack file's bytes, by file name."""
    reference.check_number_formatter()
    return {name: render(make()) for name, make in BUILDERS.items()}


def main(argv: List[str]) -> int:
    files = build()
    if "--check" in argv:
        stale = [str(d / n) for d in TARGETS for n, data in files.items() if not (d / n).exists() or (d / n).read_bytes() != data]
        for path in stale:
            print(f"stale: {path}", file=sys.stderr)
        return 1 if stale else 0
    for directory in TARGETS:
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (directory / name).write_bytes(data)
    counts = ", ".join(f"{n} {len(json.loads(d)['cases'])}" for n, d in files.items())
    print(f"wrote {counts} to {', '.join(str(d) for d in TARGETS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
