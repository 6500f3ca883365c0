"""`ajpcore check offer|result|status`: what is wrong, with paths; exit 0 valid, 1 invalid, 2 malformed."""

import json
import os

import pytest

from conftest import run_python
from vector_files import load_json

SIGNED = load_json("ajp", "ajp-signature-vectors.json")
VECTORS = {v["id"]: v["message"] for v in SIGNED["vectors"]}
MESSAGES = load_json("ajp", "ajp-spec-messages.json")
PUBLIC = SIGNED["keypair"]["public_key_spki_der_b64"]
NOW = "2026-03-05T10:01:00Z"


def check(kind, doc, *args, secret=None, raw=None):
    env = dict(os.environ)
    if secret is not None:
        env["AJP_SECRET"] = secret
    data = raw if raw is not None else json.dumps(doc).encode()
    return run_python("-m", "ajpcore", "check", kind, *args, stdin=data, env=env)


def test_valid_hmac_offer_exits_0():
    out = check("offer", VECTORS["offer-human-hmac-jcs"], "--now", NOW, "--secret-env", "AJP_SECRET",
                secret=SIGNED["hmac_secret_utf8"])
    assert out.returncode == 0, out.stderr
    assert b"signature: valid" in out.stdout


def test_valid_ed25519_offer_from_a_file(tmp_path):
    path = tmp_path / "offer.json"
    path.write_text(json.dumps(VECTORS["offer-agent-ed25519-jcs"]))
    out = run_python("-m", "ajpcore", "check", "offer", str(path), "--now", NOW, "--public-key", PUBLIC)
    assert out.returncode == 0, out.stderr


def test_unsigned_check_says_the_signature_was_not_checked():
    out = check("offer", MESSAGES["JobOffer"], "--now", NOW)
    assert out.returncode == 0, out.stderr
    assert b"not checked" in out.stdout


def test_schema_problems_exit_1_with_paths():
    doc = json.loads(json.dumps(MESSAGES["JobOffer"]))
    doc["budget"]["max_usd"] = "0.5"
    del doc["task"]["type"]
    out = check("offer", doc, "--now", NOW)
    assert out.returncode == 1
    lines = out.stderr.decode().splitlines()
    assert "ajpcore check: Expected `number`, got `str` - at `$.budget.max_usd`" in lines
    assert "ajpcore check: Object missing required field `type` - at `$.task`" in lines


def test_expired_offer_exits_1():
    out = check("offer", MESSAGES["JobOffer"], "--now", "2026-03-06T00:00:00Z")
    assert out.returncode == 1 and b"offer has expired" in out.stderr


@pytest.mark.parametrize("vid, key", [("offer-human-hmac-legacy", "secret"), ("offer-agent-tampered-nested", "public")])
def test_bad_and_legacy_signatures_exit_1(vid, key):
    args = ["--secret-env", "AJP_SECRET"] if key == "secret" else ["--public-key", PUBLIC]
    out = check("offer", VECTORS[vid], "--now", NOW, *args, secret=SIGNED["hmac_secret_utf8"])
    assert out.returncode == 1
    assert (b"LegacySignature" if key == "secret" else b"BadSignature") in out.stderr


def test_result_signed_over_the_sdk_subset_needs_the_explicit_flag():
    out = check("result", VECTORS["result-ed25519-sdk-subset"], "--public-key", PUBLIC)
    assert out.returncode == 1 and b"BadSignature" in out.stderr and b"subset" in out.stderr
    out = check("result", VECTORS["result-ed25519-sdk-subset"], "--public-key", PUBLIC, "--sdk-subset")
    assert out.returncode == 0, out.stderr
    assert b"subset only; not signed: /ajp, /usage" in out.stdout


def test_status_checks_its_schema():
    assert check("status", MESSAGES["JobStatus"]).returncode == 0
    bad = dict(MESSAGES["JobStatus"], progress=1.5)
    out = check("status", bad)
    assert out.returncode == 1 and b"Expected `number` <= 1 - at `$.progress`" in out.stderr


@pytest.mark.parametrize("raw", [b'{"ajp": "0.1", "ajp": "0.1"}', b"[1,", b"\xff"])
def test_malformed_input_exits_2(raw):
    out = check("offer", None, raw=raw)
    assert out.returncode == 2 and b"malformed" in out.stderr


def test_usage_errors_exit_2():
    assert check("offer", MESSAGES["JobOffer"], "--now", "yesterday").returncode == 2
    assert check("offer", MESSAGES["JobOffer"], "--secret-env", "AJP_UNSET_VARIABLE").returncode == 2
    # An empty secret is a usage error too, as for `ajpcore verify`: one reader serves both.
    empty = check("offer", MESSAGES["JobOffer"], "--secret-env", "AJP_SECRET", secret="")
    assert empty.returncode == 2 and b"is empty" in empty.stderr
    assert check("nonsense", {}).returncode == 2


def test_acceptance_rule_problems_one_per_line_with_their_paths():
    doc = json.loads(json.dumps(MESSAGES["JobOffer"]))
    doc["expires_at"] = "2026-03-08T10:00:00Z"  # three days after issued_at, over the 1-day lifetime
    out = check("offer", doc, "--now", "2026-03-09T00:00:00Z")
    assert out.returncode == 1
    lines = out.stderr.decode().splitlines()
    assert "ajpcore check: offer has expired - at `$.expires_at`" in lines
    assert "ajpcore check: offer lifetime exceeds 86400 s - at `$.expires_at`" in lines
    assert all(line.startswith("ajpcore check: ") and line.endswith("`") for line in lines), lines


def test_public_key_file_works_for_check_offer(tmp_path):
    key_file = tmp_path / "pub.key"
    key_file.write_bytes(PUBLIC.encode() + b"\r\n")
    out = check("offer", VECTORS["offer-agent-ed25519-jcs"], "--now", NOW, "--public-key", str(key_file))
    assert out.returncode == 0, out.stderr
    assert b"signature: valid" in out.stdout
