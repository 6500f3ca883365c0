"""The conformance pack: regenerated exactly, bundled identically, within its field contract,
passed by ajpcore on both twins, and a runner that reports what differs."""

import base64
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from ajpcore import conformance
from ajpcore.conformance import PACK_FILES, PackError
from conftest import run_python

REPO = Path(__file__).resolve().parents[2]
PACK = REPO / "conformance"
BUNDLED = REPO / "ajpcore" / "conformance" / "pack"
MINIMUM = {"canonical.json": 200, "signatures.json": 100, "decode.json": 150, "envelopes.json": 50, "a2a.json": 70}

KINDS = {"syntax", "utf8", "lone_surrogate", "duplicate_name", "bom", "depth", "unsafe_integer", "number_range", "noncharacter"}
FIELDS = {
    "canonical.json": ({"id", "why", "input"}, {"canonical", "error", "js_lax"}),
    "signatures.json": ({"id", "why", "body", "expect"}, {"secret", "public_key", "mode", "js_lax"}),
    "decode.json": ({"id", "why", "input_b64", "expect"}, {"reason"}),
    "envelopes.json": ({"id", "why", "message_b64", "now", "expect_status"},
                       {"secret", "public_key", "expect_code", "follows", "replay_capacity"}),
    "a2a.json": ({"id", "why"}, {"card", "payloads", "unsigned", "jwks", "jwks_text", "expect", "profile", "algorithms",
                                 "allowed_jku", "expect_profile", "expect_kid", "expect_unsigned"}),
}


def _generator():
    spec = importlib.util.spec_from_file_location("conformance_generate", PACK / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases(name):
    return json.loads((PACK / name).read_bytes())["cases"]


def test_committed_pack_is_the_generators_output():
    built = _generator().build()
    assert sorted(built) == sorted(PACK_FILES)
    for name, data in built.items():
        assert (PACK / name).read_bytes() == data, f"conformance/{name} is stale: run python conformance/generate.py"


@pytest.mark.parametrize("name", PACK_FILES)
def test_bundled_copy_is_the_repository_pack(name):
    assert (BUNDLED / name).read_bytes() == (PACK / name).read_bytes()


@pytest.mark.parametrize("name", PACK_FILES)
def test_field_contract(name):
    doc = json.loads((PACK / name).read_bytes())
    assert set(doc) == {"version", "cases"} and doc["version"] == 1
    cases = doc["cases"]
    assert len(cases) >= MINIMUM[name]
    assert len({c["id"] for c in cases}) == len(cases)
    required, optional = FIELDS[name]
    for case in cases:
        assert required <= set(case) <= required | optional, case["id"]
        assert case["why"] and "\n" not in case["why"], case["id"]
        if name == "canonical.json":
            assert ("canonical" in case) != ("error" in case), case["id"]
            assert case.get("error", "syntax") in KINDS
        elif name == "signatures.json":
            assert ("secret" in case) != ("public_key" in case), case["id"]
            assert case["expect"] in {"valid", "bad", "legacy", "malformed", "unsupported_scheme"}
            assert case.get("mode", "full") in {"full", "sdk"}
        elif name == "decode.json":
            assert case["expect"] in {"accept", "refuse"}
            assert "reason" not in case or (case["expect"] == "refuse" and case["reason"] in KINDS)
            base64.b64decode(case["input_b64"], validate=True)
        elif name == "a2a.json":
            assert ("payloads" in case) != ("expect" in case), case["id"]
            if "payloads" in case:
                assert set(case["payloads"]) == set(case["unsigned"]) == {"served", "spec", "sdk"}, case["id"]
            else:
                assert ("jwks" in case) != ("jwks_text" in case), case["id"]
                assert case["expect"] in {"valid", "bad", "malformed", "unsupported_algorithm", "untrusted_key", "unsigned", "bad_key"}
        else:
            assert ("secret" in case) != ("public_key" in case), case["id"]
            assert case["expect_status"] in {202, 400, 401, 402, 403, 409, 429}
            earlier = {c["id"] for c in cases[: cases.index(case)]}
            assert set(case.get("follows", [])) <= earlier, case["id"]


def test_pack_covers_what_the_issue_lists():
    canonical = _cases("canonical.json")
    assert {c["error"] for c in canonical if "error" in c} >= {"lone_surrogate", "unsafe_integer", "syntax", "duplicate_name", "depth", "number_range"}
    signatures = _cases("signatures.json")
    assert {c["expect"] for c in signatures} == {"valid", "bad", "legacy", "malformed", "unsupported_scheme"}
    assert {c.get("mode") for c in signatures} == {None, "full", "sdk"}
    assert {"secret", "public_key"} <= {k for c in signatures for k in c}
    decode = _cases("decode.json")
    assert {c.get("reason") for c in decode} >= {"utf8", "lone_surrogate", "bom", "depth", "unsafe_integer", "number_range", "duplicate_name"}
    envelopes = _cases("envelopes.json")
    assert {c["expect_status"] for c in envelopes} >= {202, 400, 401, 409, 429}
    assert any("follows" in c for c in envelopes)


def test_ajpcore_passes_its_own_pack(core):
    report = conformance.run(PACK)
    assert [str(f) for f in report.failures] == []
    assert report.counts == {name: len(_cases(name)) for name in PACK_FILES}


def test_bundled_pack_is_the_default():
    assert conformance.load_pack() == conformance.load_pack(PACK)


def _flip(directory: Path) -> dict:
    """Turn one expectation per file into a wrong one; return the ids changed."""
    changed = {}
    edits = {
        "canonical.json": lambda c: "canonical" in c and c.update(canonical=c["canonical"] + " "),
        "signatures.json": lambda c: c["expect"] == "valid" and c.update(expect="bad"),
        "decode.json": lambda c: c["expect"] == "refuse" and "reason" in c and c.update(reason="syntax" if c["reason"] != "syntax" else "utf8"),
        "envelopes.json": lambda c: c["expect_status"] == 409 and c.update(expect_status=202),
        "a2a.json": lambda c: c.get("expect") == "untrusted_key" and c.update(expect="valid"),
    }
    for name, edit in edits.items():
        doc = json.loads((directory / name).read_bytes())
        case = next(c for c in doc["cases"] if edit(c) is not False)
        changed[name] = case["id"]
        (directory / name).write_text(json.dumps(doc))
    return changed


def test_runner_reports_each_wrong_expectation(tmp_path):
    for name in PACK_FILES:
        shutil.copy(PACK / name, tmp_path / name)
    changed = _flip(tmp_path)
    report = conformance.run(tmp_path)
    assert {(f.file, f.id) for f in report.failures} == set(changed.items())
    assert not report.passed and f"{len(changed)} failed" in report.summary()


def test_a_broken_pack_is_a_pack_error(tmp_path):
    with pytest.raises(PackError, match="^cannot read `canonical.json`"):
        conformance.run(tmp_path)
    for name in PACK_FILES:
        shutil.copy(PACK / name, tmp_path / name)
    doc = json.loads((tmp_path / "decode.json").read_bytes())
    doc["cases"].append(dict(doc["cases"][0]))
    (tmp_path / "decode.json").write_text(json.dumps(doc))
    with pytest.raises(PackError, match="duplicate case id"):
        conformance.run(tmp_path)
    (tmp_path / "decode.json").write_text('{"version": 1, "cases": [')
    with pytest.raises(PackError, match="^`decode.json` is not JSON"):
        conformance.run(tmp_path)
    (tmp_path / "decode.json").write_text('{"version": 2, "cases": []}')
    with pytest.raises(PackError, match="version"):
        conformance.run(tmp_path)


def test_export_writes_the_bundled_bytes(tmp_path):
    paths = conformance.export(tmp_path / "out")
    assert [Path(p).name for p in paths] == list(PACK_FILES)
    for name in PACK_FILES:
        assert (tmp_path / "out" / name).read_bytes() == (PACK / name).read_bytes()


# -- the command line ----------------------------------------------------------------------------


def test_cli_runs_the_bundled_pack():
    proc = run_python("-m", "ajpcore", "conformance", "run")
    total = sum(len(_cases(name)) for name in PACK_FILES)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert proc.stdout.decode().splitlines() == [
        f"conformance: {total} cases, {total} passed, 0 failed ("
        + ", ".join(f"{name} {len(_cases(name))}" for name in PACK_FILES) + ")"
    ]


def test_cli_prints_one_line_per_failing_case(tmp_path):
    for name in PACK_FILES:
        shutil.copy(PACK / name, tmp_path / name)
    changed = _flip(tmp_path)
    proc = run_python("-m", "ajpcore", "conformance", "run", str(tmp_path))
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1
    assert sorted(line.split(":")[0] for line in lines[:-1]) == sorted(f"FAIL {name} {cid}" for name, cid in changed.items())
    assert f", {len(changed)} failed (" in lines[-1]


def test_cli_unreadable_pack_is_a_usage_error(tmp_path):
    proc = run_python("-m", "ajpcore", "conformance", "run", str(tmp_path))
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode().startswith("ajpcore conformance: cannot read `canonical.json`")
    assert len(proc.stderr.decode().splitlines()) == 1


def test_cli_export_then_run(tmp_path):
    proc = run_python("-m", "ajpcore", "conformance", "export", str(tmp_path / "pack"))
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines() == [str(tmp_path / "pack" / name) for name in PACK_FILES]
    for name in PACK_FILES:
        assert (tmp_path / "pack" / name).read_bytes() == (PACK / name).read_bytes()
    assert run_python("-m", "ajpcore", "conformance", "run", str(tmp_path / "pack")).returncode == 0
