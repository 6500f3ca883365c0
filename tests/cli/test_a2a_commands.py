"""``ajpcore a2a sign|verify|jwks``: exit codes 0/1/2 and one-line errors, for every key kind."""

import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from ajpcore import a2a
from ajpcore.cli import main
from ajpcore.keys import Ed25519PrivateKey

CARD = {"name": "Agent", "description": "d", "version": "1", "capabilities": {"streaming": True},
        "supportedInterfaces": [{"url": "https://a.example", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}


def _pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


KEYS = {
    "EdDSA": lambda: _pem(ed25519.Ed25519PrivateKey.generate()),
    "ES256": lambda: _pem(ec.generate_private_key(ec.SECP256R1())),
    "RS256": lambda: _pem(rsa.generate_private_key(65537, 2048)),
    "ajpcore-text": lambda: (Ed25519PrivateKey.generate().to_string() + "\n").encode(),
}


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path):
    card = tmp_path / "card.json"
    card.write_text(json.dumps(CARD))
    return tmp_path, card


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_sign_jwks_verify(capsys, files, kind):
    tmp, card = files
    key = tmp / "key"
    key.write_bytes(KEYS[kind]())
    code, jwks, _ = _run(capsys, "a2a", "jwks", "--key", str(key), "--kid", "k1")
    assert code == 0 and "\"d\"" not in jwks
    (tmp / "jwks.json").write_text(jwks)
    code, signed, err = _run(capsys, "a2a", "sign", str(card), "--key", str(key), "--kid", "k1", "--jku", "https://a.example/jwks.json")
    assert code == 0 and err == ""
    entry = json.loads(signed)["signatures"][0]
    alg = "EdDSA" if kind == "ajpcore-text" else kind
    assert json.loads(a2a._jws.b64url_decode(entry["protected"], "p")) == {"alg": alg, "kid": "k1", "typ": "JOSE", "jku": "https://a.example/jwks.json"}
    (tmp / "signed.json").write_text(signed)
    code, out, _ = _run(capsys, "a2a", "verify", str(tmp / "signed.json"), "--jwks", str(tmp / "jwks.json"))
    assert (code, out) == (0, f"valid: {alg} signature by `k1` under profile `served`\n")
    code, _, err = _run(capsys, "a2a", "verify", str(tmp / "signed.json"), "--jwks", str(tmp / "jwks.json"), "--allowed-jku", "https://b.example")
    assert code == 1 and err.count("\n") == 1 and "UntrustedKey" in err


def test_verify_refusals_and_malformed_input(capsys, files):
    tmp, card = files
    key = tmp / "key"
    key.write_bytes(KEYS["RS256"]())
    _, jwks, _ = _run(capsys, "a2a", "jwks", "--key", str(key), "--kid", "r")
    (tmp / "jwks.json").write_text(jwks)
    _, signed, _ = _run(capsys, "a2a", "sign", str(card), "--key", str(key), "--kid", "r", "--alg", "PS256")
    doc = json.loads(signed)
    doc["x-added"] = True  # not covered: reported
    (tmp / "added.json").write_text(json.dumps(doc))
    code, out, _ = _run(capsys, "a2a", "verify", str(tmp / "added.json"), "--jwks", str(tmp / "jwks.json"))
    assert code == 0 and out.splitlines() == ["valid: PS256 signature by `r` under profile `sdk`", "not covered by the signature (1): /x-added"]
    doc["name"] = "Evil"
    (tmp / "bad.json").write_text(json.dumps(doc))
    cases = [
        (("verify", str(tmp / "bad.json"), "--jwks", str(tmp / "jwks.json")), 1, "BadSignature"),
        (("verify", str(tmp / "added.json"), "--jwks", str(tmp / "jwks.json"), "--profile", "served"), 1, "BadSignature"),
        (("verify", str(tmp / "added.json"), "--jwks", str(tmp / "jwks.json"), "--alg", "EdDSA"), 1, "UnsupportedAlgorithm"),
        (("verify", str(card), "--jwks", str(tmp / "jwks.json")), 1, "UnsignedCard"),
        (("verify", str(card), "--jwks", str(card)), 2, "JWKS"),
        (("verify", str(tmp / "jwks.json"), "--jwks", str(tmp / "missing.json")), 2, "cannot read"),
        (("sign", str(card), "--key", str(key), "--kid", "r", "--alg", "EdDSA"), 2, "needs a OKP key"),
        (("sign", str(card), "--key", str(card), "--kid", "r"), 2, "--key"),
        (("sign", str(card), "--key", str(tmp / "nope.pem"), "--kid", "r"), 2, "No such file"),
    ]
    for argv, status, words in cases:
        code, _, err = _run(capsys, "a2a", *argv)
        assert code == status and err.count("\n") == 1 and words in err, (argv, err)
    (tmp / "broken.json").write_text("{")
    code, _, err = _run(capsys, "a2a", "verify", str(tmp / "broken.json"), "--jwks", str(tmp / "jwks.json"))
    assert code == 2 and "JSON is malformed" in err


def test_sign_default_covers_what_the_sdks_cover_and_refuses_an_unsigned_member(capsys, tmp_path):
    # issue 31: the default left `"required": false` in the payload (served), which both SDKs refuse.
    key = tmp_path / "key"
    key.write_bytes(KEYS["EdDSA"]())
    (tmp_path / "jwks.json").write_text(_run(capsys, "a2a", "jwks", "--key", str(key), "--kid", "k1")[1])
    card = dict(CARD, capabilities={"streaming": False, "extensions": [{"uri": "https://e.example", "required": False}]})
    (tmp_path / "card.json").write_text(json.dumps(card))
    code, signed, _ = _run(capsys, "a2a", "sign", str(tmp_path / "card.json"), "--key", str(key), "--kid", "k1")
    assert code == 0
    result = a2a.verify_card(signed, (tmp_path / "jwks.json").read_text())
    assert result.payload == a2a.payload(card, "sdk") and b'"required"' not in result.payload
    (tmp_path / "extra.json").write_text(json.dumps(dict(CARD, **{"x-extra": "v"})))
    code, out, err = _run(capsys, "a2a", "sign", str(tmp_path / "extra.json"), "--key", str(key), "--kid", "k1")
    assert (code, out) == (2, "") and "`/x-extra` holds a value" in err
    code, _, _ = _run(capsys, "a2a", "sign", str(tmp_path / "extra.json"), "--key", str(key), "--kid", "k1", "--profile", "served")
    assert code == 0
