"""`ajpcore check manifest` and `ajpcore manifest sign|verify`, run as a user runs them."""

import json

import pytest

from ajpcore.iatp import CapabilityManifest, verify_manifest
from ajpcore.keys import Ed25519PrivateKey
from conftest import run_python
from vector_files import load_json

KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
OTHER = Ed25519PrivateKey.from_seed(bytes(32))


def run(*args, stdin=b""):
    return run_python("-m", "ajpcore", *args, stdin=stdin)


def manifest_doc(verification_key=None):
    doc = load_json("iatp", "iatp-handshake-manifest-spec-example.json")["manifest"]
    if verification_key is not None:
        doc["identity"]["verification_key"] = verification_key
    return doc


@pytest.fixture
def files(tmp_path):
    def write(name, content):
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
        return str(path)

    return write


def test_check_valid_manifest_prints_score_and_exits_0(files):
    out = run("check", "manifest", files("m.json", manifest_doc()))
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert "trust score 10/10: allow" in text and "signature: none" in text


def test_check_reports_every_problem_with_its_path_and_exits_1(files):
    doc = manifest_doc()
    doc["protocol_version"] = "1.0\n"
    doc["capabilities"]["concurrency_limit"] = 0
    del doc["identity"]["owner"]
    out = run("check", "manifest", files("m.json", doc))
    assert out.returncode == 1
    lines = out.stderr.decode().strip().splitlines()
    assert len(lines) == 3
    assert any("$.protocol_version" in line for line in lines)
    assert any("$.capabilities.concurrency_limit" in line for line in lines)
    assert any("owner" in line and "$.identity" in line for line in lines)


@pytest.mark.parametrize("name", ["coder_agent.json", "untrusted_honeypot.json"])
def test_check_refuses_the_python_model_shape(files, name):
    doc = load_json("iatp", f"python-model-manifests/{name}")
    out = run("check", "manifest", files("m.json", doc))
    assert out.returncode == 1
    assert b"protocol_version" in out.stderr


@pytest.mark.parametrize("data", [b'{"identity": {}, "identity": {}}', b"{", b"NaN"])
def test_check_malformed_json_exits_2(files, data):
    out = run("check", "manifest", files("m.json", data))
    assert out.returncode == 2
    assert out.stdout == b""


def test_sign_then_verify_then_check_with_pinned_key(files):
    key_file = files("key.txt", (KEY.to_string() + "\n").encode())
    doc = manifest_doc(KEY.public_key.to_string("ed25519"))
    signed = run("manifest", "sign", files("m.json", doc), "--key", key_file)
    assert signed.returncode == 0, signed.stderr
    body = json.loads(signed.stdout)
    verify_manifest(CapabilityManifest.from_dict(body))
    assert CapabilityManifest.from_dict(body).to_json() == signed.stdout  # canonical output
    signed_file = files("signed.json", signed.stdout)

    out = run("manifest", "verify", signed_file)
    assert out.returncode == 0, out.stderr
    assert b"valid" in out.stdout
    pinned = KEY.public_key.to_string("spki")
    out = run("check", "manifest", signed_file, "--public-key", pinned)
    assert out.returncode == 0, out.stderr
    assert b"signature: valid" in out.stdout
    out = run("check", "manifest", signed_file)
    assert out.returncode == 0 and b"not verified" in out.stdout
    key_text_file = files("public.txt", (pinned + "\n").encode())
    out = run("manifest", "verify", signed_file, "--public-key", key_text_file)
    assert out.returncode == 0, out.stderr

    out = run("manifest", "verify", signed_file, "--public-key", OTHER.public_key.to_string("ed25519"))
    assert out.returncode == 1 and b"expected public key" in out.stderr
    body["trust_level"] = "trusted"
    out = run("manifest", "verify", files("tampered.json", body))
    assert out.returncode == 1 and b"BadSignature" in out.stderr


def test_verify_unsigned_or_unusable_key_exits_1(files):
    out = run("manifest", "verify", files("m.json", manifest_doc()))
    assert out.returncode == 1 and b"$.signature" in out.stderr
    doc = manifest_doc()  # placeholder key `ed25519:abc123...`
    doc["signature"] = "ed25519:" + "A" * 86 + "=="
    out = run("manifest", "verify", files("m.json", doc))
    assert out.returncode == 1 and b"verification_key" in out.stderr


def test_sign_refuses_a_key_the_manifest_does_not_name(files):
    key_file = files("key.txt", OTHER.to_string().encode())
    out = run("manifest", "sign", files("m.json", manifest_doc(KEY.public_key.to_string("ed25519"))), "--key", key_file)
    assert out.returncode == 2 and out.stdout == b""
    assert b"does not match" in out.stderr
    out = run("manifest", "sign", files("m.json", manifest_doc()), "--key", key_file)
    assert out.returncode == 2 and b"verification_key" in out.stderr


def test_usage_errors_exit_2(files):
    m = files("m.json", manifest_doc())
    assert run("check", "manifest", m, "--public-key", "junk").returncode == 2
    assert run("manifest", "sign", m).returncode == 2  # --key is required
    assert run("manifest", "sign", m, "--key", files("k.txt", b"not a key")).returncode == 2
    assert run("manifest", "verify", m, "--public-key", "junk").returncode == 2


def test_stdin(files):
    out = run("check", "manifest", stdin=json.dumps(manifest_doc()).encode())
    assert out.returncode == 0, out.stderr


def test_check_prints_specification_warnings_without_failing(files):
    doc = manifest_doc()
    doc["reversibility"]["compensation_method"] = "undo_it"
    out = run("check", "manifest", files("m.json", doc))
    assert out.returncode == 0, out.stderr
    assert b"warning: `undo_it` is neither a standard method" in out.stdout
    assert b"$.reversibility.compensation_method" in out.stdout
