"""Interop with the JavaScript reference, in Node (tests/interop/check_pack.mjs).

The pinned npm packages (tests/interop/package.json and package-lock.json: npm
``canonicalize`` and ``provenance-protocol`` 0.3.0, whose canonicalizer the AJP SDK 0.3
signs with) are installed by ``.ci/run`` into a temporary folder named by
``AJPCORE_INTEROP_NODE_MODULES``.  Without node the tests skip, saying why; with
``CI=true`` and node present they must run, so a missing install fails instead.
"""

import json
import os
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
SCRIPT = HERE / "interop" / "check_pack.mjs"
LOCK = HERE / "interop" / "package-lock.json"
PACK = HERE.parent / "conformance"
NODE = shutil.which("node")
DOCUMENTS = 5000


def _node_major():
    out = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=True).stdout
    return int(out.strip().lstrip("v").split(".")[0])


@pytest.fixture(scope="module")
def modules():
    """The folder holding node_modules with the pinned packages."""
    if NODE is None:
        pytest.skip("node is not installed: the JavaScript interop check needs Node.js 20 or later")
    if _node_major() < 20:
        pytest.skip("node is older than 20: npm canonicalize 5 needs String.prototype.isWellFormed")
    folder = os.environ.get("AJPCORE_INTEROP_NODE_MODULES")
    in_ci = os.environ.get("CI", "").strip().lower() == "true"
    if not folder:
        why = (
            "AJPCORE_INTEROP_NODE_MODULES is not set: copy tests/interop/package*.json to a folder, "
            "run `npm ci --prefix FOLDER` and point the variable at it (.ci/run does)"
        )
        if in_ci:
            pytest.fail("CI=true and node is present, so the interop check must run: " + why)
        pytest.skip(why)
    locked = json.loads(LOCK.read_text())["packages"]
    for name in ("canonicalize", "provenance-protocol"):
        installed = Path(folder) / "node_modules" / name / "package.json"
        if not installed.exists():
            pytest.fail(f"{installed} is missing: AJPCORE_INTEROP_NODE_MODULES must be an `npm ci` of tests/interop")
        version = json.loads(installed.read_text())["version"]
        assert version == locked[f"node_modules/{name}"]["version"], f"{name} {version} is not the pinned version"
    return folder


def _node(modules, *args):
    proc = subprocess.run([NODE, str(SCRIPT), "--modules", modules, *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    summary = json.loads(proc.stdout)
    return proc.returncode, summary


def _pack_cases(name):
    return json.loads((PACK / name).read_bytes())["cases"]


def test_node_agrees_with_every_canonical_and_signature_case(modules):
    rc, summary = _node(modules, "--pack", str(PACK))
    assert summary["failures"] == [] and rc == 0
    for name, key in (("canonical.json", "canonical"), ("signatures.json", "signatures")):
        cases = _pack_cases(name)
        stats = summary[key]
        # Every case checked with both canonicalizers; the only differences are on cases marked js_lax.
        assert stats["cases"] == len(cases) and stats["checks"] == 2 * len(cases)
        assert stats["agree"] + stats["lax_differ"] == stats["checks"]
        assert stats["lax_differ"] <= 2 * sum(1 for c in cases if "js_lax" in c)
    assert summary["signatures"]["hmac"] > 0 and summary["signatures"]["ed25519"] > 0


def _random_double(rng):
    while True:
        (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if x == x and x not in (float("inf"), float("-inf")):
            return x


_ALPHABET = ["a", "Z", "0", "_", " ", '"', "\\", "/", "\n", "\t", "\x00", "\x1f", "\x7f", "\u00e9", "e\u0301", "\u2028",
             "\u20ac", "\u4e2d", "\ufb33", "\ufeff", "\ufffd", "\U0001f600", "\U00010000", "\U0010fffd", "\ue000"]
_NUMBERS = [0, -0.0, 1, -1, 5e-324, 1e21, 1e-7, 1e-6, 0.1, 2**53 - 1, 2**53, 2**64, 1.7976931348623157e308,
            123456789012345680000, 4.35, 0.30000000000000004, 5.0]


def _random_value(rng, depth=0):
    r = rng.random()
    if depth > 4 or r < 0.4:
        kind = rng.randrange(8)
        if kind == 0:
            return None
        if kind == 1:
            return rng.random() < 0.5
        if kind == 2:
            return rng.choice(_NUMBERS)
        if kind == 3:
            return _random_double(rng)
        if kind == 4:
            return rng.randint(-(2**53) + 1, 2**53 - 1)
        if kind == 5:
            return (rng.random() - 0.5) * 10.0 ** rng.randint(-20, 20)
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(7)))
    if r < 0.7:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {"".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(7))): _random_value(rng, depth + 1) for _ in range(rng.randrange(6))}


def test_random_documents_from_ajpcore_canonicalize_alike_in_node(modules, twins, tmp_path):
    native, pure = twins
    rng = random.Random(1208)
    lines = []
    for i in range(DOCUMENTS):
        doc = _random_value(rng, 4 if i % 5 == 0 else 0)
        canonical = native.canonicalize(doc)
        assert pure.canonicalize(doc) == canonical
        text = json.dumps(doc, ensure_ascii=bool(i % 2), indent=2 if i % 3 == 0 else None)
        assert native.canonicalize(native.decode(text)) == canonical == pure.canonicalize(pure.decode(text))
        lines.append(json.dumps({"input": text, "canonical": canonical.decode("utf-8")}))
    (tmp_path / "docs.jsonl").write_text("\n".join(lines) + "\n")
    rc, summary = _node(modules, "--docs-in", str(tmp_path / "docs.jsonl"))
    assert summary["failures"] == [] and rc == 0
    assert summary["docs_in"] == {"documents": DOCUMENTS, "checks": 2 * DOCUMENTS, "agree": 2 * DOCUMENTS}


def test_random_documents_from_node_canonicalize_alike_in_ajpcore(modules, twins, tmp_path):
    out = tmp_path / "from_node.jsonl"
    rc, summary = _node(modules, "--docs-out", str(out), "--count", str(DOCUMENTS), "--seed", "1208")
    assert summary["failures"] == [] and rc == 0
    assert summary["docs_out"] == {"documents": DOCUMENTS, "npm_agrees": DOCUMENTS}
    disagreements = []
    lines = out.read_text("utf-8").split("\n")[:-1]  # not splitlines: U+2028 is inside documents
    assert len(lines) == DOCUMENTS
    for line in lines:
        doc = json.loads(line)
        expected = doc["canonical"].encode("utf-8")
        for twin in twins:
            got = twin.canonicalize(twin.decode(doc["input"].encode("utf-8")))
            if got != expected:
                disagreements.append((twin.__name__, doc["input"][:80], got[:80], expected[:80]))
    assert disagreements == []
