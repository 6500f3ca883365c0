"""``ajpcore provenance verify-attestation|verify-notice`` and ``ajpcore check offer --declaration``:
exit 0 valid, 1 refused, 2 malformed; never a traceback."""

from __future__ import annotations

import json

import pytest

import ajpcore
from ajpcore import Ed25519PrivateKey, ajp
from ajpcore.cli import main
from ajpcore.provenance import sign_declaration
from vector_files import load_json, vector_path

ATT = load_json("provenance", "provenance-gh-53f2b47-attestations-0.1.json")
NOT = load_json("provenance", "provenance-gh-8d6dbcc-notices-0.1.json")
EXIT = {"valid": 0, "expired": 1, "not_yet_valid": 1, "invalid": 1, "unchecked": 1}


def _write(tmp_path, name, value) -> str:
    path = tmp_path / name
    path.write_bytes(value if isinstance(value, bytes) else json.dumps(value).encode())
    return str(path)


@pytest.mark.parametrize("v", ATT["vectors"], ids=lambda v: v["id"])
def test_verify_attestation_vectors(tmp_path, capsys, v):
    doc = _write(tmp_path, "att.json", v["attestation"])
    key = _write(tmp_path, "issuer.pub", (ATT["issuer"]["public_key"] + "\r\n").encode())
    rc = main(["provenance", "verify-attestation", doc, "--issuer-key", key, "--now", v["now"]])
    out, err = capsys.readouterr()
    assert rc == EXIT[v["expect"]], err
    if v["expect"] == "valid":
        assert out.startswith("valid attestation `") and not err
    else:
        assert err.startswith(f"ajpcore provenance verify-attestation: {v['expect']}: ") and not out


@pytest.mark.parametrize("v", NOT["vectors"], ids=lambda v: v["id"])
def test_verify_notice_vectors(tmp_path, capsys, v):
    doc = _write(tmp_path, "notice.json", v["notice"])
    rc = main(["provenance", "verify-notice", doc, "--key", NOT["old_key"]["public_key"]])
    out, err = capsys.readouterr()
    assert rc == EXIT[v["expect"]], err
    if v["id"] == "notice-key-rotation":
        assert f"(fingerprint {v['new_key_fingerprint']})" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--issuer-key", "not-a-key"], "--issuer-key"),
        (["--issuer-key", "MCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], "--issuer-key"),
        (["--issuer-key", ATT["issuer"]["public_key"], "--now", "yesterday"], "--now"),
    ],
)
def test_verify_attestation_usage_errors(tmp_path, capsys, argv, message):
    doc = _write(tmp_path, "att.json", ATT["vectors"][0]["attestation"])
    assert main(["provenance", "verify-attestation", doc, *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("content", [b"", b"{", b'{"a":1,"a":2}', b"\xff"])
def test_malformed_documents_exit_2(tmp_path, capsys, content):
    doc = _write(tmp_path, "att.json", content)
    assert main(["provenance", "verify-attestation", doc, "--issuer-key", ATT["issuer"]["public_key"], "--now", "2026-09-22T12:00:00Z"]) == 2
    assert main(["provenance", "verify-notice", doc, "--key", NOT["old_key"]["public_key"]]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 2


@pytest.mark.parametrize("doc", [[], "x", 1, None])
def test_non_objects_are_refused_exit_1(tmp_path, doc):
    path = _write(tmp_path, "att.json", doc)
    assert main(["provenance", "verify-notice", path, "--key", NOT["old_key"]["public_key"]]) == 1


# -- check offer --declaration ------------------------------------------------------------

KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
OTHER = Ed25519PrivateKey.from_seed(bytes(range(1, 33)))
PID = "provenance:domain:agent.example.com"
URL = "https://agent.example.com/.well-known/provenance.json"
NOW = "2026-03-05T10:00:00Z"


def _files(tmp_path, key=KEY, decl_key=KEY):
    decl = sign_declaration({"provenance": "0.2", "name": "n", "description": "d", "provenance_id": PID}, decl_key)
    offer = ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL},
                          to="provenance:domain:receiver.example", task={"type": "t", "instruction": "i"},
                          now=NOW, private_key=key)
    return _write(tmp_path, "offer.json", offer.to_json()), _write(tmp_path, "decl.json", ajpcore.canonicalize(decl))


def test_check_offer_with_declaration(tmp_path, capsys):
    offer, decl = _files(tmp_path)
    pins = str(tmp_path / "pins.json")
    argv = ["check", "offer", offer, "--declaration", decl, "--retrieved-from", URL, "--now", NOW, "--pins", pins]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"sender: `{PID}`, key fingerprint {KEY.public_key.fingerprint}" in out
    assert "signature: valid under the declared key" in out
    assert main(argv) == 0  # the same key again
    offer2, decl2 = _files(tmp_path, key=OTHER, decl_key=OTHER)
    assert main(["check", "offer", offer2, "--declaration", decl2, "--retrieved-from", URL, "--now", NOW, "--pins", pins]) == 1
    assert "KeyRotated" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, status",
    [
        (["--retrieved-from", "https://evil.example/p.json"], 1),
        ([], 2),  # --retrieved-from missing
        (["--retrieved-from", URL, "--public-key", KEY.public_key.to_string()], 2),
    ],
)
def test_check_offer_identity_refusals(tmp_path, capsys, extra, status):
    offer, decl = _files(tmp_path)
    assert main(["check", "offer", offer, "--declaration", decl, "--now", NOW, *extra]) == status
    assert "Traceback" not in capsys.readouterr().err


def test_check_offer_signed_by_another_key(tmp_path, capsys):
    offer, decl = _files(tmp_path, key=OTHER)
    assert main(["check", "offer", offer, "--declaration", decl, "--retrieved-from", URL, "--now", NOW]) == 1
    assert "BadSignature" in capsys.readouterr().err


def test_corrupt_pin_file_is_exit_2(tmp_path, capsys):
    offer, decl = _files(tmp_path)
    pins = _write(tmp_path, "pins.json", b"{}")
    assert main(["check", "offer", offer, "--declaration", decl, "--retrieved-from", URL, "--now", NOW, "--pins", pins]) == 2
    assert "--pins" in capsys.readouterr().err


def test_pins_without_declaration_is_usage(tmp_path):
    offer, _ = _files(tmp_path)
    assert main(["check", "offer", offer, "--now", NOW, "--pins", str(tmp_path / "p.json")]) == 2
