"""ajpcore.provenance against the Provenance reference vectors, on both core twins."""

from __future__ import annotations

import base64
import copy
import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ajpcore import EncodeError, Ed25519PrivateKey, Ed25519PublicKey, ValidationError
from ajpcore.provenance import (
    DeclarationVerification,
    check_location,
    declaration_digest,
    declaration_signing_payload,
    parse_provenance_id,
    verify_declaration,
)
from vector_files import load_json

DECL = load_json("provenance", "provenance-npm-0.3.0-testvectors-declarations-0.2.json")
SIG01 = load_json("provenance", "provenance-npm-0.3.0-testvectors-signatures-0.1.json")
SCHEMA = load_json("provenance", "provenance-npm-0.3.0-schema-provenance-0.2.json")
VECTORS = DECL["vectors"]
VALID = VECTORS[0]["declaration"]
FINGERPRINT = "6a54646bde8ee38b578d1db85eec8f993db211d8fd98a12471ef00ec4067a21a"
HOME = "https://github.com/example/research-agent"
PRIVATE = Ed25519PrivateKey.from_string(DECL["keypair"]["private_key"])


def resign(decl: dict) -> dict:
    """A copy of ``decl`` signed with the vectors' test key over its 0.2 payload."""
    out = copy.deepcopy(decl)
    sig = PRIVATE.sign(declaration_signing_payload(out))
    out.setdefault("identity", {})["signature"] = base64.b64encode(sig).decode()
    return out


# -- signing payload and digest --


def test_reference_payload(core):
    for v in VECTORS[:2]:
        assert declaration_signing_payload(v["declaration"]) == DECL["reference_payload"].encode()


def test_payload_does_not_mutate(core):
    decl = copy.deepcopy(VALID)
    before = json.dumps(decl, sort_keys=True)
    declaration_signing_payload(decl)
    declaration_digest(decl)
    verify_declaration(decl, HOME)
    assert json.dumps(decl, sort_keys=True) == before
    assert "signature" in decl["identity"]


def test_payload_keeps_identity_without_signature(core):
    assert declaration_signing_payload({"identity": {"signature": "x"}, "a": 1}) == (
        b'provenance-declaration-v1:{"a":1,"identity":{}}'
    )
    assert declaration_signing_payload({"a": 1}) == b'provenance-declaration-v1:{"a":1}'


def test_digest(core):
    digest = declaration_digest(VALID)
    assert digest == "sha256:" + hashlib.sha256(DECL["reference_payload"].encode()).hexdigest()
    assert declaration_digest(VECTORS[1]["declaration"]) == digest  # key order, signature irrelevant
    changed = copy.deepcopy(VALID)
    changed["constraints"].pop()
    assert declaration_digest(changed) != digest


@pytest.mark.parametrize(
    "decl, error, message",
    [
        ([], ValidationError, "a declaration must be an object - at `\\$`"),
        ({"identity": "x"}, ValidationError, "must be an object when present - at `\\$.identity`"),
        ({"identity": None}, ValidationError, "must be an object when present"),
        ({"n": float("nan")}, EncodeError, "at `\\$.n`"),
    ],
)
def test_payload_refuses(core, decl, error, message):
    with pytest.raises(error, match=message):
        declaration_signing_payload(decl)


# -- the reference vectors --


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_declaration_vectors(core, v):
    result = verify_declaration(v["declaration"], retrieved_from=HOME)
    assert isinstance(result, DeclarationVerification)
    assert result.valid == (v["expect"] == "valid")
    assert result.trustworthy == result.valid
    assert result.signed is True
    assert result.location == "match"
    assert result.provenance_id == "provenance:github:example/research-agent"
    assert result.public_key == v["declaration"]["identity"]["public_key"]
    pk = Ed25519PublicKey.from_string(result.public_key)
    assert result.fingerprint == pk.fingerprint
    if result.public_key == DECL["keypair"]["public_key"]:
        assert result.fingerprint == FINGERPRINT
    if v["expect"] == "valid":
        assert result.reason is None and result.coverage == "declaration"
    elif v["id"] == "declaration-unknown-spec-version":
        assert result.coverage is None
        assert result.reason == "Spec version 9.9 is not known to this verifier — cannot check its signature"
    else:
        assert result.reason == "Signature does not verify"


def test_valid_without_location_is_not_trustworthy(core):
    for retrieved_from in (None, "https://example.org/x", "https://github.com/attacker/research-agent"):
        result = verify_declaration(VALID, retrieved_from)
        assert result.valid and not result.trustworthy
        assert result.reason == "Signature valid, but retrieval location was not confirmed"
    assert verify_declaration(VALID, "https://github.com/attacker/x").location == "mismatch"
    assert verify_declaration(VALID).location == "unchecked"


@pytest.mark.parametrize("v", SIG01["vectors"][:1] + SIG01["vectors"][3:], ids=lambda v: v["id"])
def test_01_identity_signatures(core, v):
    # A 0.1 declaration signs "<provenance_id>:<public_key>" only.
    provenance_id, _, key = v["message"].rpartition(":")
    assert key == v["public_key"]
    decl = {
        "provenance": "0.1",
        "name": "x",
        "description": "y",
        "provenance_id": provenance_id,
        "identity": {"public_key": v["public_key"], "signature": v["signature"]},
    }
    result = verify_declaration(decl, "https://github.com/example/research-agent/blob/main/PROVENANCE.yml")
    assert result.valid == (v["expect"] == "valid")
    assert result.coverage == "identity"
    if v["id"] == "identity-signature-malformed":
        assert result.reason == "identity.signature is malformed"


def test_01_signature_ignores_other_fields(core):
    v = SIG01["vectors"][0]
    decl = {
        "provenance_id": "provenance:github:example/research-agent",
        "identity": {"public_key": v["public_key"], "signature": v["signature"]},
        "constraints": [],
    }
    result = verify_declaration(decl)
    assert result.valid and result.coverage == "identity"  # no "provenance" field: 0.1


def test_tampered_anywhere_fails(core):
    for mutate in (
        lambda d: d.__setitem__("name", d["name"] + "!"),
        lambda d: d["capabilities"].reverse(),
        lambda d: d["identity"].__setitem__("algorithm", "ED25519"),
        lambda d: d.__setitem__("extra", None),
        lambda d: d["identity"].__setitem__("signature", d["identity"]["signature"][:-3] + "Ag=="),
    ):
        decl = copy.deepcopy(VALID)
        mutate(decl)
        result = verify_declaration(decl, HOME)
        assert not result.valid and not result.trustworthy


@settings(max_examples=30)
@given(path=st.lists(st.sampled_from(["name", "description", "version", "capabilities", "constraints"]), min_size=1, max_size=1), text=st.text(max_size=8))
def test_resigned_declarations_verify_and_changes_break_them(path, text):
    decl = copy.deepcopy(VALID)
    decl[path[0]] = text
    signed = resign(decl)
    assert verify_declaration(signed, HOME).trustworthy
    signed[path[0]] = text + "x"
    assert verify_declaration(signed, HOME).reason == "Signature does not verify"


# -- refusals with the reference verifier's reasons --


def _with_identity(**identity):
    decl = copy.deepcopy(VALID)
    decl["identity"] = identity
    return decl


@pytest.mark.parametrize(
    "decl, reason, signed",
    [
        ("text", "Declaration must be a parsed object", False),
        ({"name": "x"}, "No identity block", False),
        ({"identity": []}, "No identity block", False),
        (_with_identity(), "identity.public_key is missing", False),
        (_with_identity(public_key=""), "identity.public_key is missing", False),
        (_with_identity(public_key=VALID["identity"]["public_key"], algorithm="rsa"), "Unsupported algorithm: rsa", False),
        (_with_identity(public_key=VALID["identity"]["public_key"], algorithm=5), "Unsupported algorithm: 5", False),
        (_with_identity(public_key="not a key"), "identity.public_key is not a valid Ed25519 key", False),
        (
            _with_identity(public_key=" " + VALID["identity"]["public_key"]),
            "identity.public_key is not a valid Ed25519 key",
            False,
        ),
        (
            _with_identity(public_key=VALID["identity"]["public_key"]),
            "identity.signature is absent — key advertised, file not attested",
            False,
        ),
        (
            _with_identity(public_key=VALID["identity"]["public_key"], signature="not-a-signature"),
            "identity.signature is malformed",
            True,
        ),
        (
            _with_identity(public_key=VALID["identity"]["public_key"], signature=VALID["identity"]["signature"] + "\n"),
            "identity.signature is malformed",
            True,
        ),
    ],
)
def test_refusal_reasons(core, decl, reason, signed):
    result = verify_declaration(decl, HOME)
    assert result.reason == reason
    assert result.signed is signed
    assert not result.valid and not result.trustworthy


def test_weak_key_refused(core):
    identity_key = base64.b64encode(bytes.fromhex("302a300506032b6570032100") + b"\x01" + bytes(31)).decode()
    result = verify_declaration(_with_identity(public_key=identity_key, signature="A" * 86 + "=="))
    assert result.reason.startswith("identity.public_key is refused by the strict Ed25519 policy")
    assert result.fingerprint is None and not result.valid


def test_01_needs_provenance_id(core):
    v = SIG01["vectors"][0]
    result = verify_declaration({"identity": {"public_key": v["public_key"], "signature": v["signature"]}})
    assert result.reason == "provenance_id is required to verify a 0.1 signature"
    assert result.signed and result.fingerprint is not None


def test_uncanonicalisable_declaration(core):
    decl = resign(VALID)
    decl["weight"] = float("inf")
    result = verify_declaration(decl)
    assert result.reason.startswith("Declaration cannot be canonicalised: ")
    assert result.coverage == "declaration" and not result.valid


# -- location rules --

LOCATIONS = [
    ("provenance:domain:agent.example.com", "https://agent.example.com/.well-known/provenance.json", "match"),
    ("provenance:domain:agent.example.com", "https://evil.example.com/.well-known/provenance.json", "mismatch"),
    ("provenance:domain:example.com", "https://agent.example.com/provenance.json", "mismatch"),
    ("provenance:domain:agent.example.com", "https://example.com/provenance.json", "mismatch"),
    ("provenance:domain:AGENT.Example.COM", "https://agent.example.com/provenance.json", "unchecked"),  # not its canonical spelling
    ("provenance:domain:example.com/agents/research", "https://example.com/agents/research/provenance.json", "match"),
    ("provenance:domain:example.com/agents/research", "https://example.com/agents/billing/provenance.json", "mismatch"),
    ("provenance:domain:example.com/agents/research", "https://example.com/attacker/agents/research/x.json", "mismatch"),
    ("provenance:domain:example.com", "https://example.com:8443/.well-known/provenance.json", "mismatch"),
    ("provenance:domain:example.com", "https://example.com:443/.well-known/provenance.json", "match"),
    ("provenance:domain:example.com", "https://example.com@evil.org/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:example.com", "http://example.com/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:example.com", "not a url", "unchecked"),
    ("provenance:domain:example.com", "https://example.com/x\n", "unchecked"),
    ("provenance:domain:/", "https://example.com/x", "unchecked"),
    ("provenance:github:alice/agent", "https://github.com/alice/agent", "match"),
    ("provenance:github:alice/agent", "https://GitHub.com/Alice/Agent/blob/main/PROVENANCE.yml", "match"),
    ("provenance:github:alice/agent", "https://raw.githubusercontent.com/alice/agent/main/PROVENANCE.yml", "match"),
    ("provenance:github:alice/agent", "https://api.github.com/repos/alice/agent/contents/PROVENANCE.yml", "match"),
    ("provenance:github:alice/agent", "https://api.github.com/users/alice/agent", "mismatch"),
    ("provenance:github:alice/agent", "https://github.com/alice/agent-fork", "mismatch"),
    ("provenance:github:alice/agent", "https://github.com/alice", "mismatch"),
    ("provenance:github:victim/agent", "https://raw.githubusercontent.com/attacker/p/main/victim/agent/PROVENANCE.yml", "mismatch"),
    ("provenance:github:victim/agent", "https://github.com/attacker/project/blob/main/victim/agent/PROVENANCE.yml", "mismatch"),
    ("provenance:github:alice/agent", "https://objects.githubusercontent.com/alice/agent/x", "unchecked"),
    ("provenance:github:alice/agent", "https://agent.example.com/.well-known/provenance.json", "unchecked"),
    ("provenance:github:alice/agent", "https://github.com.evil.org/alice/agent", "unchecked"),
    ("provenance:github:alice/agent", "https://pypi.org/project/agent/", "mismatch"),
    ("provenance:github:alice/agent", "https://github.com:8443/alice/agent", "mismatch"),
    ("provenance:npm:left-pad", "https://www.npmjs.com/package/left-pad", "match"),
    ("provenance:npm:left-pad", "https://www.npmjs.com/package/evil/left-pad", "mismatch"),
    ("provenance:npm:@acme/agent", "https://registry.npmjs.org/@acme%2fagent", "unchecked"),  # an encoded separator
    ("provenance:npm:@acme/agent", "https://www.npmjs.com/package/@acme/agent", "match"),
    ("provenance:pypi:agent-kit", "https://pypi.org/project/agent-kit/", "match"),
    ("provenance:huggingface:alice/agent", "https://huggingface.co/spaces/alice/agent/raw/main/PROVENANCE.yml", "match"),
    ("provenance:huggingface:alice/agent", "https://huggingface.co/bob/x/raw/main/alice/agent/PROVENANCE.yml", "mismatch"),
    ("not-a-provenance-id", "https://example.com/x", "unchecked"),
    (" provenance:github:alice/agent", "https://github.com/alice/agent", "unchecked"),
    (None, "https://github.com/alice/agent", "unchecked"),
    # URLs a fetcher (WHATWG URL) and urlsplit could read differently are never a match.
    ("provenance:domain:example.com", "https://evil.org\\@example.com/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:example.com", "https://user@example.com/.well-known/provenance.json", "unchecked"),
    ("provenance:github:alice/agent", "https://github.com/alice/agent/../../evil/x/PROVENANCE.yml", "unchecked"),
    ("provenance:github:alice/agent", "https://github.com/alice/agent/%2e%2e/x", "unchecked"),
    ("provenance:domain:bücher.example", "https://bücher.example/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:example.com", "https://[::1]/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:example.com", "https://example.com:99999/x", "unchecked"),
    ("provenance:domain:example.com", "https://exa%6dple.com/x", "unchecked"),
]


@pytest.mark.parametrize("provenance_id, url, expected", LOCATIONS)
def test_check_location(provenance_id, url, expected):
    assert check_location(provenance_id, url) == expected


def test_parse_provenance_id():
    assert parse_provenance_id("PROVENANCE:GitHub:Alice/Agent") == ("github", "Alice/Agent")
    assert parse_provenance_id("provenance:github:") is None
    assert parse_provenance_id(3) is None


def test_domain_declaration_trustworthy_only_at_home(core):
    decl = copy.deepcopy(VALID)
    decl["provenance_id"] = "provenance:domain:agent.example.com"
    decl = resign(decl)
    assert verify_declaration(decl, "https://agent.example.com/.well-known/provenance.json").trustworthy
    away = verify_declaration(decl, "https://agent.example.com.evil.org/.well-known/provenance.json")
    assert away.valid and away.location == "mismatch" and not away.trustworthy


def test_vectors_match_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    for v in VECTORS:
        if v["declaration"]["provenance"] == "0.2":
            jsonschema.validate(v["declaration"], SCHEMA)
