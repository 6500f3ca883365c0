"""Manifest signatures (ajpcore extension `iatp-manifest-v1`), on both core twins and both Ed25519 backends."""

import base64
import copy
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey as OsslPublicKey
from hypothesis import HealthCheck, given, settings

from ajpcore import BadSignature, KeyFormatError, MalformedSignature, UnsupportedScheme, ValidationError
from ajpcore.iatp import (
    MANIFEST_SIGNATURE_CONTEXT,
    CapabilityManifest,
    manifest_signing_bytes,
    sign_manifest,
    verify_manifest,
)
from ajpcore.keys import Ed25519PrivateKey
from ajpcore.strategies import manifests

README = Path(__file__).resolve().parent.parent.parent / "docs" / "iatp.md"  # the manifest signature format (was in README.md)
SEED = bytes(range(32))
KEY = Ed25519PrivateKey.from_seed(SEED)
OTHER = Ed25519PrivateKey.from_seed(bytes(32))
BACKENDS = [None, "cryptography"]  # None is libsodium (the default)


def worked_example_manifest():
    return CapabilityManifest.from_dict(
        {
            "identity": {
                "agent_id": "booking-agent",
                "owner": "Example Travel",
                "verification_key": KEY.public_key.to_string("ed25519"),
            },
            "trust_level": "trusted",
            "protocol_version": "1.0",
            "reversibility": {"level": "partial", "undo_window_seconds": 3600, "compensation_method": "refund_minus_fee"},
            "scopes": ["booking:write"],
        }
    )


def document(**changes):
    doc = {
        "$schema": "http://inter-agent-trust.org/v1/schema",
        "identity": {"agent_id": "a", "owner": "o", "verification_key": KEY.public_key.to_string("ed25519")},
        "trust_level": "standard",
        "protocol_version": "1.0",
        "privacy": {"retention_policy": "ephemeral", "x-region-detail": {"weights": [5.0, -0.0, 1e-7, 1e21]}},
        "scopes": ["repo:read"],
        "\U0001f680": "non-BMP key",
    }
    doc.update(changes)
    return doc


def test_readme_documents_the_worked_example_this_code_computes(core):
    signed = sign_manifest(worked_example_manifest(), KEY)
    block = "\n".join(
        [
            "```text",
            f"public key:  {KEY.public_key.to_string('ed25519')}",
            "signed bytes (UTF-8):",
            manifest_signing_bytes(signed).decode("utf-8"),
            f"signature:   {signed.signature}",
            "```",
        ]
    )
    text = README.read_text("utf-8")
    start = text.index("<!-- iatp-worked-example:begin -->\n") + len("<!-- iatp-worked-example:begin -->\n")
    end = text.index("\n<!-- iatp-worked-example:end -->")
    assert text[start:end] == block
    assert "000102...1f" in text and SEED.hex().startswith("000102") and SEED.hex().endswith("1f")
    assert f"the {len(MANIFEST_SIGNATURE_CONTEXT)} ASCII bytes `{MANIFEST_SIGNATURE_CONTEXT.decode()}`" in text
    assert f"64 signature bytes: {len(signed.signature)} characters" in text


@pytest.mark.parametrize("backend", BACKENDS)
def test_sign_then_verify(core, backend):
    signed = sign_manifest(CapabilityManifest.from_dict(document()), KEY)
    assert verify_manifest(signed, backend=backend) is None
    assert verify_manifest(signed.to_dict(), backend=backend) is None
    assert verify_manifest(signed, public_key=KEY.public_key, backend=backend) is None
    assert verify_manifest(signed, public_key=KEY.public_key.to_string("spki"), backend=backend) is None


def test_format_checked_independently_with_openssl(core):
    """What another implementation computes: prefix + JCS(manifest minus signature), pure Ed25519."""
    doc = document()
    signed = sign_manifest(CapabilityManifest.from_dict(doc), KEY)
    text = signed.signature
    assert text.startswith("ed25519:") and len(text) == 96
    raw = base64.b64decode(text[8:], validate=True)
    expected_bytes = b"iatp-manifest-v1:" + core.canonicalize(doc)
    assert manifest_signing_bytes(signed) == expected_bytes == MANIFEST_SIGNATURE_CONTEXT + core.canonicalize(doc)
    OsslPublicKey.from_public_bytes(KEY.public_key.raw).verify(raw, expected_bytes)
    # The signed manifest is the received one plus `signature`, nothing else changed.
    assert signed.to_dict() == dict(doc, signature=text)


@pytest.mark.parametrize("form", ["ed25519", "spki", "hex"])
def test_every_public_key_form_verifies(core, form):
    key_text = "ed25519:" + KEY.public_key.raw.hex() if form == "hex" else KEY.public_key.to_string(form)
    doc = document()
    doc["identity"]["verification_key"] = key_text
    signed = sign_manifest(doc, KEY)
    verify_manifest(signed)


def tamper_cases():
    def nested(d):
        d["privacy"]["x-region-detail"]["weights"][0] = 5.5

    def level(d):
        d["trust_level"] = "verified_partner"

    def added(d):
        d["capabilities"] = {"idempotency": True}

    def removed(d):
        del d["scopes"]

    def key(d):
        d["identity"]["verification_key"] = OTHER.public_key.to_string("ed25519")

    return [nested, level, added, removed, key]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tamper", tamper_cases(), ids=lambda f: f.__name__)
def test_any_change_breaks_the_signature(core, backend, tamper):
    signed = sign_manifest(document(), KEY).to_dict()
    tamper(signed)
    with pytest.raises(BadSignature):
        verify_manifest(signed, backend=backend)


def test_resigning_replaces_the_signature_and_signature_is_not_signed():
    once = sign_manifest(document(), KEY)
    twice = sign_manifest(once, KEY)
    assert once.signature == twice.signature  # Ed25519 is deterministic, the old signature not covered
    assert manifest_signing_bytes(once) == manifest_signing_bytes(once.with_signature(None))


# -- a claimed key that cannot be used refuses the signature, never the manifest --------------

SMALL_ORDER = "ed25519:" + base64.b64encode(bytes([1]) + bytes(31)).decode()  # the identity point
NON_CANONICAL = "ed25519:" + base64.b64encode(bytes([0xED]) + bytes([0xFF]) * 30 + bytes([0x7F])).decode()  # y = p


@pytest.mark.parametrize(
    "claimed",
    ["ed25519:abc123def456", "ed25519:abc123...", "", SMALL_ORDER, NON_CANONICAL, "ed25519:" + "AB" * 32],
)
def test_unusable_claimed_key_refuses_only_the_signature(core, claimed):
    signed = sign_manifest(document(), KEY).to_dict()
    signed["identity"]["verification_key"] = claimed
    manifest = CapabilityManifest.from_dict(signed)  # still readable
    assert manifest.identity.verification_key == claimed
    with pytest.raises(BadSignature, match="verification_key"):
        verify_manifest(manifest)


def test_missing_claimed_key():
    doc = sign_manifest(document(), KEY).to_dict()
    del doc["identity"]["verification_key"]
    with pytest.raises(BadSignature, match="names no key"):
        verify_manifest(doc)


def test_pinned_key_must_be_the_claimed_one():
    doc = document()
    doc["identity"]["verification_key"] = OTHER.public_key.to_string("ed25519")
    forged = sign_manifest(doc, OTHER)  # a self-consistent manifest under someone else's key
    verify_manifest(forged)  # valid on its own terms
    with pytest.raises(BadSignature, match="expected public key"):
        verify_manifest(forged, public_key=KEY.public_key)
    with pytest.raises(KeyFormatError):
        verify_manifest(forged, public_key="not a key")


@pytest.mark.parametrize(
    "signature,error",
    [
        (None, MalformedSignature),
        (5, MalformedSignature),
        (["ed25519:..."], MalformedSignature),
        ("ed25519:", MalformedSignature),
        ("ed25519:" + "A" * 86 + "B=", MalformedSignature),  # non-zero pad bits
        ("ed25519:" + "A" * 86 + "==\n", MalformedSignature),
        ("ED25519:" + "A" * 86 + "==", MalformedSignature),
        ("sha256:" + "0" * 64, UnsupportedScheme),
        ("rsa:abc", UnsupportedScheme),
    ],
)
def test_malformed_or_foreign_signatures(core, signature, error):
    doc = document()
    if signature is not None:
        doc["signature"] = signature
    manifest = CapabilityManifest.from_dict(doc)  # any `signature` value is schema-valid
    with pytest.raises(error, match=r"\$\.signature"):
        verify_manifest(manifest)


def test_wrong_signature_bytes(core):
    signed = sign_manifest(document(), KEY)
    other = sign_manifest(document(trust_level="trusted"), KEY)
    with pytest.raises(BadSignature):
        verify_manifest(signed.with_signature(other.signature))


def test_sign_refuses_a_key_the_manifest_does_not_name():
    with pytest.raises(KeyFormatError, match="does not match"):
        sign_manifest(document(), OTHER)
    doc = document()
    del doc["identity"]["verification_key"]
    with pytest.raises(KeyFormatError, match=KEY.public_key.to_string("ed25519").replace("+", r"\+")):
        sign_manifest(doc, KEY)
    with pytest.raises(ValidationError):
        sign_manifest({"identity": {}}, KEY)


def test_signature_errors_are_401():
    with pytest.raises(BadSignature) as info:  # R of small order: refused by the strict policy
        verify_manifest(document(signature="ed25519:" + "A" * 86 + "=="))
    assert info.value.status == 401
    with pytest.raises(MalformedSignature) as info:
        verify_manifest(document(signature="ed25519:" + "A" * 88))
    assert info.value.status == 401


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(doc=manifests())
def test_any_manifest_signs_and_verifies_on_both_backends(doc):
    doc = copy.deepcopy(doc)
    doc["identity"]["verification_key"] = KEY.public_key.to_string("ed25519")
    doc.pop("signature", None)
    signed = sign_manifest(doc, KEY)
    for backend in BACKENDS:
        verify_manifest(signed.to_dict(), backend=backend)
