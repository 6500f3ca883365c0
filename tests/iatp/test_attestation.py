"""IATP-001 section 5.2 attestations: typed, signed as the reference signs them, fresh, matching."""

import base64

import jsonschema
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey as OsslPrivateKey

from ajpcore import BadSignature, KeyFormatError, MalformedSignature, ValidationError
from ajpcore.errors import TrustRefused
from ajpcore.iatp import Attestation, attestation_signing_bytes, schema, verify_attestation
from ajpcore.keys import Ed25519PublicKey
from ajpcore.timestamps import is_timestamp
from vector_files import load_json

EXAMPLE = load_json("iatp", "iatp-attestation-spec-example.json")["attestation"]
SEED = bytes(range(32, 64))
CONTROL_PLANE = OsslPrivateKey.from_private_bytes(SEED)
RAW_PUBLIC = CONTROL_PLANE.public_key().public_bytes_raw()
REFERENCE_KEY_TEXT = base64.b64encode(RAW_PUBLIC).decode()  # the reference's form: raw 32 bytes, base64
CODE = "sha256:" + "a3f5" * 16
CONFIG = "sha256:" + "d8e2" * 16
FORMATS = jsonschema.FormatChecker(formats=())
FORMATS.checks("date-time")(lambda v: not isinstance(v, str) or is_timestamp(v))


def attestation(**changes):
    """Signed exactly as the reference does: Ed25519 over UTF-8 of the four `:`-joined fields."""
    doc = {
        "agent_id": "booking-agent-v2.1.0",
        "codebase_hash": CODE,
        "config_hash": CONFIG,
        "signing_key_id": "control-plane-prod-2026",
        "timestamp": "2026-01-25T10:00:00Z",
        "expires_at": "2026-01-26T10:00:00Z",
    }
    doc.update(changes)
    message = f"{doc['agent_id']}:{doc['codebase_hash']}:{doc['config_hash']}:{doc['timestamp']}".encode()
    doc.setdefault("signature", base64.b64encode(CONTROL_PLANE.sign(message)).decode())
    return doc


NOW = "2026-01-25T12:00:00Z"


def test_spec_example_parses_validates_round_trips_and_its_placeholder_signature_is_refused(core):
    jsonschema.Draft202012Validator(schema("iatp-attestation"), format_checker=FORMATS).validate(EXAMPLE)
    typed = Attestation.from_dict(EXAMPLE)
    assert typed.to_dict() == EXAMPLE
    assert Attestation.from_json(core.canonicalize(EXAMPLE)) == typed
    assert attestation_signing_bytes(typed) == (
        b"booking-agent-v2.1.0:sha256:a3f5b9c...:sha256:d8e2a1b...:2026-01-25T10:00:00Z"
    )
    with pytest.raises(MalformedSignature, match=r"\$\.signature"):
        verify_attestation(typed, REFERENCE_KEY_TEXT, now=NOW)


@pytest.mark.parametrize("backend", [None, "cryptography"])  # None is libsodium (the default)
@pytest.mark.parametrize(
    "key",
    [
        REFERENCE_KEY_TEXT,
        "ed25519:" + REFERENCE_KEY_TEXT,
        "ed25519:" + RAW_PUBLIC.hex(),
        Ed25519PublicKey.from_bytes(RAW_PUBLIC),
        Ed25519PublicKey.from_bytes(RAW_PUBLIC).to_string("spki"),
    ],
    ids=["reference", "ed25519-b64", "ed25519-hex", "object", "spki"],
)
def test_reference_signed_attestation_verifies(core, key, backend):
    verify_attestation(
        attestation(), key, now=NOW, expected_codebase_hash=CODE, expected_config_hash=CONFIG, backend=backend
    )


@pytest.mark.parametrize(
    "field,value", [("agent_id", "other-agent"), ("codebase_hash", "sha256:" + "00" * 32), ("timestamp", "2026-01-25T10:00:01Z")]
)
def test_changed_signed_field_is_refused(core, field, value):
    doc = attestation()
    doc[field] = value
    with pytest.raises(BadSignature):
        verify_attestation(doc, REFERENCE_KEY_TEXT, now=NOW)


def test_freshness_boundaries():
    doc = attestation()
    verify_attestation(doc, REFERENCE_KEY_TEXT, now="2026-01-25T10:00:00Z")  # from its timestamp on
    with pytest.raises(TrustRefused, match="not valid yet") as info:
        verify_attestation(doc, REFERENCE_KEY_TEXT, now="2026-01-25T09:59:59.999Z")
    assert info.value.status == 403
    with pytest.raises(TrustRefused, match="expired"):
        verify_attestation(doc, REFERENCE_KEY_TEXT, now="2026-01-26T10:00:00Z")  # expires_at is excluded
    with pytest.raises(ValidationError, match="now"):
        verify_attestation(doc, REFERENCE_KEY_TEXT, now="tomorrow")


def test_redated_expired_attestation_is_refused():
    # Signed in 2020 for a day; `expires_at` (not covered by the signature) moved to 9999 afterwards.
    doc = attestation(timestamp="2020-01-01T00:00:00Z", expires_at="2020-01-02T00:00:00Z")
    doc["expires_at"] = "9999-12-31T23:59:59Z"
    with pytest.raises(TrustRefused, match="max_age") as info:
        verify_attestation(doc, REFERENCE_KEY_TEXT, now=NOW)
    assert info.value.status == 403
    verify_attestation(doc, REFERENCE_KEY_TEXT, now="2020-01-01T23:59:59.999Z")  # inside the signed window


def test_validity_window_comes_from_the_signed_timestamp():
    doc = attestation(expires_at="2027-01-01T00:00:00Z")  # a year: longer than max_age allows
    verify_attestation(doc, REFERENCE_KEY_TEXT, now="2026-01-26T09:59:59.999999Z")  # timestamp + 86400 s, excluded
    with pytest.raises(TrustRefused, match="max_age"):
        verify_attestation(doc, REFERENCE_KEY_TEXT, now="2026-01-26T10:00:00Z")
    verify_attestation(doc, REFERENCE_KEY_TEXT, now="2026-01-26T10:00:00Z", max_age=2 * 86_400)
    with pytest.raises(TrustRefused, match="max_age"):
        verify_attestation(doc, REFERENCE_KEY_TEXT, now="2026-01-25T10:00:01Z", max_age=0.5)
    # `expires_at` can only shorten the window
    short = attestation(expires_at="2026-01-25T11:00:00Z")
    with pytest.raises(TrustRefused, match="expires_at"):
        verify_attestation(short, REFERENCE_KEY_TEXT, now=NOW)
    verify_attestation(short, REFERENCE_KEY_TEXT, now="2026-01-25T10:59:59Z")


@pytest.mark.parametrize("max_age", [0, -1, float("nan"), float("inf"), True, "86400", None])
def test_max_age_must_be_a_positive_number(max_age):
    with pytest.raises(ValueError, match="max_age"):
        verify_attestation(attestation(), REFERENCE_KEY_TEXT, now=NOW, max_age=max_age)


def test_expected_hashes():
    with pytest.raises(TrustRefused, match="codebase_hash"):
        verify_attestation(attestation(), REFERENCE_KEY_TEXT, now=NOW, expected_codebase_hash="sha256:" + "ff" * 32)
    with pytest.raises(TrustRefused, match="config_hash"):
        verify_attestation(attestation(), REFERENCE_KEY_TEXT, now=NOW, expected_config_hash="sha256:" + "ff" * 32)


def test_ambiguous_fields_are_refused_before_the_signature():
    """`a:sha256` + `x:...` and `a` + `sha256:x:...` sign the same bytes: such attestations are refused."""
    with pytest.raises(BadSignature, match="agent_id"):
        verify_attestation(attestation(agent_id="agent:sha256"), REFERENCE_KEY_TEXT, now=NOW)
    with pytest.raises(BadSignature, match="codebase_hash"):
        verify_attestation(attestation(codebase_hash="sha256:ab:cd"), REFERENCE_KEY_TEXT, now=NOW)


@pytest.mark.parametrize("signature", ["", "base64_signature", "A" * 88, "A" * 86 + "B=", " " + "A" * 86 + "=="])
def test_malformed_signatures(signature):
    with pytest.raises(MalformedSignature):
        verify_attestation(attestation(signature=signature), REFERENCE_KEY_TEXT, now=NOW)


@pytest.mark.parametrize("key", ["", "A" * 44, base64.b64encode(bytes([1]) + bytes(31)).decode(), 5])
def test_unusable_keys(key):
    with pytest.raises(KeyFormatError):
        verify_attestation(attestation(), key, now=NOW)


@pytest.mark.parametrize("missing", ["agent_id", "signature", "expires_at", "config_hash"])
def test_required_members(missing):
    doc = attestation()
    del doc[missing]
    with pytest.raises(ValidationError, match=missing):
        Attestation.from_dict(doc)
