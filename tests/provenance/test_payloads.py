"""Attestations, withdrawals, notices, challenges and revocations: the SPEC's normative vectors
and hostile documents, on both core twins and both Ed25519 backends."""

from __future__ import annotations

import base64
import copy
import hashlib
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ajpcore import Ed25519PrivateKey, KeyUsageError, TimestampError, ValidationError
from ajpcore.provenance import (
    AttestationVerification,
    NoticeVerification,
    attestation_signing_payload,
    challenge_payload,
    new_nonce,
    notice_signing_payload,
    revocation_payload,
    sign_attestation,
    sign_challenge,
    sign_notice,
    sign_revocation,
    sign_withdrawal,
    verify_attestation,
    verify_challenge,
    verify_notice,
    verify_revocation,
    verify_withdrawal,
    withdrawal_signing_payload,
)
from ajpcore.strategies import json_values
from vector_files import load_json

ATT = load_json("provenance", "provenance-gh-53f2b47-attestations-0.1.json")
NOT = load_json("provenance", "provenance-gh-8d6dbcc-notices-0.1.json")
DECL = load_json("provenance", "provenance-npm-0.3.0-testvectors-declarations-0.2.json")
ISSUER_KEY = ATT["issuer"]["public_key"]
ISSUER_PRIVATE = Ed25519PrivateKey.from_string(ATT["issuer"]["private_key"])
OTHER_PRIVATE = Ed25519PrivateKey.from_string(ATT["other_key"]["private_key"])
OLD_KEY = NOT["old_key"]["public_key"]
OLD_PRIVATE = Ed25519PrivateKey.from_string(NOT["old_key"]["private_key"])
NEW_PRIVATE = Ed25519PrivateKey.from_string(NOT["new_key"]["private_key"])
BACKENDS = [None, "pynacl"]
GOOD_ATT = ATT["vectors"][0]["attestation"]
NOW = ATT["vectors"][0]["now"]
ROTATION = next(v["notice"] for v in NOT["vectors"] if v["id"] == "notice-key-rotation")
# The 14 small-order encodings are the core's business; one (the identity point) as SPKI text:
SMALL_ORDER_SPKI = "MCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="


# -- the normative vectors ------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("v", ATT["vectors"], ids=lambda v: v["id"])
def test_attestation_vectors(core, v, backend):
    got = verify_attestation(v["attestation"], ISSUER_KEY, now=v["now"], backend=backend)
    assert got.status == v["expect"], got.reason
    assert got.valid is (v["expect"] == "valid")
    assert (got.reason is None) is (v["expect"] == "valid")


def test_attestation_vector_counts():
    statuses = sorted(v["expect"] for v in ATT["vectors"])
    assert len(statuses) == 10 and set(statuses) == {"valid", "expired", "not_yet_valid", "invalid", "unchecked"}
    assert len(NOT["vectors"]) == 8


def test_attestation_reference_payload(core):
    assert attestation_signing_payload(GOOD_ATT) == ATT["reference_payload"].encode("utf-8")


def test_attestation_resigning_reproduces_the_vector(core):
    unsigned = {k: v for k, v in GOOD_ATT.items() if k != "signature"}
    assert sign_attestation(unsigned, ISSUER_PRIVATE) == GOOD_ATT  # Ed25519 is deterministic (RFC 8032)


def test_declaration_digest_of_the_vector_declaration(core):
    from ajpcore.provenance import declaration_digest

    decl = next(v["declaration"] for v in DECL["vectors"] if v["id"] == ATT["declaration_digest"]["declaration_id"])
    assert declaration_digest(decl) == ATT["declaration_digest"]["digest"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_withdrawal_vector(core, backend):
    w = ATT["withdrawal"]
    assert withdrawal_signing_payload(w["issuer"], w["attestation_id"]) == w["payload"].encode()
    got = verify_withdrawal(w, ISSUER_KEY, attestation=GOOD_ATT, backend=backend)
    assert got.status == w["expect"]
    assert sign_withdrawal(w["issuer"], w["attestation_id"], ISSUER_PRIVATE)["signature"] == w["signature"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("v", NOT["vectors"], ids=lambda v: v["id"])
def test_notice_vectors(core, v, backend):
    got = verify_notice(v["notice"], OLD_KEY, backend=backend)
    assert got.status == v["expect"], got.reason
    if v["notice"]["event"] == "key-rotation" and got.valid:
        assert got.new_key_fingerprint == v["new_key_fingerprint"] == got.new_public_key.fingerprint
        assert got.new_public_key.to_string() == v["notice"]["claims"]["new_public_key"]
    else:
        assert got.new_public_key is None and got.new_key_fingerprint is None


def test_notice_reference_payload(core):
    assert notice_signing_payload(NOT["vectors"][0]["notice"]) == NOT["reference_payload"].encode()


def test_rotation_signed_by_the_new_key_is_invalid_under_either_key(core):
    by_new = next(v["notice"] for v in NOT["vectors"] if v["id"] == "notice-rotation-by-new-key")
    assert verify_notice(by_new, OLD_KEY).status == "invalid"
    # under the new key it names the old key's fingerprint, so it is still refused
    assert verify_notice(by_new, NOT["new_key"]["public_key"]).status == "invalid"
    # a correctly self-consistent rotation signed by the new key: names and is signed by the new key
    forged = sign_notice(dict(by_new, key_fingerprint=NEW_PRIVATE.public_key.fingerprint), NEW_PRIVATE)
    assert verify_notice(forged, NEW_PRIVATE.public_key).valid  # genuine under the new key...
    assert verify_notice(forged, OLD_KEY).status == "invalid"  # ...and proves nothing to a holder of the old one


# -- attestation rules ----------------------------------------------------------------------


def _att(**changes):
    body = {k: v for k, v in GOOD_ATT.items() if k != "signature"}
    body.update(changes)
    return sign_attestation(body, ISSUER_PRIVATE)


def test_signature_before_dates_for_every_window(core):
    for now in ("2026-09-20T12:00:00Z", NOW, "2030-01-01T00:00:00Z"):
        forged = dict(GOOD_ATT, signature=sign_attestation(GOOD_ATT, OTHER_PRIVATE)["signature"])
        assert verify_attestation(forged, ISSUER_KEY, now=now).status == "invalid"


def test_five_minute_skew_on_issued_at(core):
    issued = datetime(2026, 9, 21, 9, 0, tzinfo=timezone.utc)
    assert verify_attestation(GOOD_ATT, ISSUER_KEY, now=issued - timedelta(seconds=300)).status == "valid"
    assert verify_attestation(GOOD_ATT, ISSUER_KEY, now=issued - timedelta(seconds=300, microseconds=1)).status == "not_yet_valid"


def test_valid_until_boundary(core):
    until = datetime(2026, 9, 24, 9, 0, tzinfo=timezone.utc)
    assert verify_attestation(GOOD_ATT, ISSUER_KEY, now=until).status == "valid"
    assert verify_attestation(GOOD_ATT, ISSUER_KEY, now=until + timedelta(microseconds=1)).status == "expired"


def test_now_forms_agree(core):
    forms = [NOW, datetime(2026, 9, 22, 12, tzinfo=timezone.utc), datetime(2026, 9, 22, 12, tzinfo=timezone.utc).timestamp()]
    assert {verify_attestation(GOOD_ATT, ISSUER_KEY, now=n).status for n in forms} == {"valid"}
    for bad in (datetime(2026, 9, 22, 12), "2026-09-22", True, None, float("nan")):
        with pytest.raises(TimestampError):
            verify_attestation(GOOD_ATT, ISSUER_KEY, now=bad)


@pytest.mark.parametrize(
    "stamp",
    ["2026-09-21", "2026-09-21T09:00:00", "2026-09-21 09:00:00Z", "2026-09-21T09:00Z", "2026-02-30T09:00:00Z", 1758445200],
)
def test_non_rfc3339_dates_are_invalid_even_when_signed(core, stamp):
    got = verify_attestation(_att(issued_at=stamp), ISSUER_KEY, now=NOW)
    assert got.status == "invalid" and "RFC 3339" in got.reason


def test_offsets_are_honoured(core):
    # 11:00+02:00 is 09:00Z: the same instant as the vector
    assert verify_attestation(_att(issued_at="2026-09-21T11:00:00+02:00"), ISSUER_KEY, now=NOW).status == "valid"
    got = verify_attestation(_att(valid_until="2026-09-21T10:59:59+02:00"), ISSUER_KEY, now=NOW)
    assert got.status == "invalid" and got.reason == "valid_until is not after issued_at"


def test_issuer_fingerprint_must_match_the_key_given(core):
    other_pub = OTHER_PRIVATE.public_key
    att = _att()
    got = verify_attestation(att, other_pub, now=NOW)
    assert got.status == "invalid" and "different issuer key" in got.reason
    # signed by the other key and naming it: genuine under it, never under the issuer's key
    theirs = sign_attestation(dict(att, issuer=dict(att["issuer"], key_fingerprint=other_pub.fingerprint)), OTHER_PRIVATE)
    assert verify_attestation(theirs, other_pub, now=NOW).valid
    assert verify_attestation(theirs, ISSUER_KEY, now=NOW).status == "invalid"


@pytest.mark.parametrize(
    "key, reason",
    [
        (None, "no issuer public key"),
        ("", "no issuer public key"),
        ("MCowBQYDK2VwAyEA9oWvkINZuc4VfE5hn5ZrkzL23t1JAOwxo/ztml02OTM", "not a valid"),
        (" " + ISSUER_KEY, "not a valid"),
        (SMALL_ORDER_SPKI, "strict Ed25519 policy"),
        (12, "not a valid"),
    ],
)
def test_unusable_issuer_key_is_unchecked(core, key, reason):
    got = verify_attestation(GOOD_ATT, key, now=NOW)
    assert got.status == "unchecked" and reason in got.reason


def test_small_order_issuer_cannot_vouch(core):
    # the identity point "verifies" the all-zero-S signature of anything under a lax verifier
    fingerprint = hashlib.sha256(base64.b64decode(SMALL_ORDER_SPKI)).hexdigest()
    forged = _att(issuer=dict(GOOD_ATT["issuer"], key_fingerprint=fingerprint))
    forged["signature"] = base64.b64encode(b"\x01" + bytes(63)).decode()
    for backend in BACKENDS:
        assert verify_attestation(forged, SMALL_ORDER_SPKI, now=NOW, backend=backend).status == "unchecked"


@pytest.mark.parametrize("version", ["9.9", "0.2", "0.10", " 0.1", 0.1, None, ["0.1"], {"v": "0.1"}, True])
def test_unknown_versions_are_unchecked_never_guessed(core, version):
    att = _att(attestation=version)
    assert verify_attestation(att, ISSUER_KEY, now=NOW).status == "unchecked"
    del att["attestation"]
    got = verify_attestation(att, ISSUER_KEY, now=NOW)
    assert got.status == "unchecked" and "(missing)" in got.reason


ATT_MEMBERS = [
    ("id", "id"), ("kind", "kind"), ("scope", "scope"), ("claims", "claims"), ("signature", "signature"),
    ("issuer", "issuer.provenance_id"), ("subject", "subject.provenance_id or subject.url"),
]


@pytest.mark.parametrize("member, named", ATT_MEMBERS)
@pytest.mark.parametrize("value", [None, 0, 1.5, True, [], "", {"x": 1}], ids=repr)
def test_wrong_types_at_every_member(core, member, named, value):
    att = dict(GOOD_ATT)
    att[member] = value
    got = verify_attestation(att, ISSUER_KEY, now=NOW)
    if member == "claims" and value == {"x": 1}:
        assert got.status == "invalid" and got.reason == "signature does not verify"
        return
    assert got.status == "invalid"
    assert named in got.reason or got.reason == "signature does not verify"
    del att[member]
    assert verify_attestation(att, ISSUER_KEY, now=NOW).status == "invalid"


@pytest.mark.parametrize("inner", ["provenance_id", "key_fingerprint"])
@pytest.mark.parametrize("value", [None, 7, [], {}])
def test_wrong_types_inside_issuer(core, inner, value):
    att = copy.deepcopy(GOOD_ATT)
    att["issuer"][inner] = value
    got = verify_attestation(att, ISSUER_KEY, now=NOW)
    assert got.status == "invalid" and f"issuer.{inner}" in got.reason


@pytest.mark.parametrize("value", [None, 7, [], {}, "not-a-time", 20260921])
@pytest.mark.parametrize("member", ["issued_at", "valid_until"])
def test_wrong_types_at_dates(core, member, value):
    att = dict(GOOD_ATT)
    att[member] = value
    assert verify_attestation(att, ISSUER_KEY, now=NOW).status == "invalid"


@pytest.mark.parametrize(
    "signature",
    [
        GOOD_ATT["signature"][:-2] + "AB",  # non-canonical: pad bits set
        GOOD_ATT["signature"][:-2],  # unpadded
        GOOD_ATT["signature"].replace("+", "-"),  # URL alphabet
        " " + GOOD_ATT["signature"],
        GOOD_ATT["signature"] + "\n",
        "ed25519:" + GOOD_ATT["signature"],
        "A" * 88,
    ],
)
def test_non_canonical_signature_is_invalid(core, signature):
    got = verify_attestation(dict(GOOD_ATT, signature=signature), ISSUER_KEY, now=NOW)
    assert got.status == "invalid"


def test_subject_url_is_accepted_in_place_of_an_id(core):
    att = _att(subject={"url": "https://agent.example/"})
    got = verify_attestation(att, ISSUER_KEY, now=NOW)
    assert got.valid and got.subject == {"url": "https://agent.example/"}


def test_huge_and_deep_claims(core):
    big = _att(claims={"blob": "x" * 2_000_000, "list": list(range(100_000))})
    assert verify_attestation(big, ISSUER_KEY, now=NOW).valid
    deep: object = "leaf"
    for _ in range(100_000):
        deep = [deep]
    att = dict(GOOD_ATT, claims={"deep": deep})
    got = verify_attestation(att, ISSUER_KEY, now=NOW)
    assert got.status == "invalid" and "canonicalised" in got.reason
    nan = dict(GOOD_ATT, claims={"x": float("nan")})
    assert verify_attestation(nan, ISSUER_KEY, now=NOW).status == "invalid"
    surrogate = dict(GOOD_ATT, claims={"x": "\ud800"})
    assert verify_attestation(surrogate, ISSUER_KEY, now=NOW).status == "invalid"


@pytest.mark.parametrize("doc", [None, [], "att", 3, b"{}", [GOOD_ATT]])
def test_non_objects(core, doc):
    assert verify_attestation(doc, ISSUER_KEY, now=NOW) == AttestationVerification(
        "invalid", f"an attestation must be an object, got `{type(doc).__name__}`"
    )
    assert verify_notice(doc, OLD_KEY) == NoticeVerification(
        "invalid", f"a notice must be an object, got `{type(doc).__name__}`"
    )
    assert verify_withdrawal(doc, ISSUER_KEY).status == "invalid"
    with pytest.raises(ValidationError):
        attestation_signing_payload(doc)
    with pytest.raises(ValidationError):
        notice_signing_payload(doc)


def test_unknown_backend_is_a_typed_error(core):
    with pytest.raises(KeyUsageError):
        verify_attestation(GOOD_ATT, ISSUER_KEY, now=NOW, backend="openssl")


@settings(max_examples=60)
@given(path=st.sampled_from(["claims", "subject", "scope", "kind", "id", "status_url"]), value=json_values(max_leaves=6))
def test_any_change_after_signing_is_invalid(path, value):
    att = copy.deepcopy(GOOD_ATT)
    if att.get(path) == value:
        return
    att[path] = value
    for backend in BACKENDS:
        assert verify_attestation(att, ISSUER_KEY, now=NOW, backend=backend).status in ("invalid",)


@settings(max_examples=80)
@given(doc=json_values(max_leaves=12))
def test_hostile_documents_never_raise(doc):
    for backend in BACKENDS:
        assert verify_attestation(doc, ISSUER_KEY, now=NOW, backend=backend).status in ("invalid", "unchecked")
        assert verify_notice(doc, OLD_KEY, backend=backend).status in ("invalid", "unchecked")
        assert verify_withdrawal(doc, ISSUER_KEY, backend=backend).status in ("invalid", "unchecked")


# -- withdrawals ----------------------------------------------------------------------------


def test_withdrawal_for_another_attestation(core):
    w = ATT["withdrawal"]
    other = dict(GOOD_ATT, id="att-0002")
    assert verify_withdrawal(w, ISSUER_KEY, attestation=other).status == "invalid"
    assert verify_withdrawal(dict(w, attestation_id="att-0002"), ISSUER_KEY).status == "invalid"
    assert verify_withdrawal(w, OTHER_PRIVATE.public_key).status == "invalid"
    assert verify_withdrawal(w, None).status == "unchecked"
    with pytest.raises(ValidationError):
        withdrawal_signing_payload("", "att-1")
    # ids with colons cannot be shifted between the two members
    assert withdrawal_signing_payload("a:b", "c") != withdrawal_signing_payload("a", "b:c")


# -- notices --------------------------------------------------------------------------------


def test_rotation_with_a_mismatched_new_fingerprint(core):
    claims = dict(ROTATION["claims"], new_key_fingerprint="0" * 64)
    got = verify_notice(sign_notice(dict(ROTATION, claims=claims), OLD_PRIVATE), OLD_KEY)
    assert got.status == "invalid" and got.new_public_key is None


@pytest.mark.parametrize("new_key", [SMALL_ORDER_SPKI, "not a key", 5, None])
def test_rotation_to_an_unusable_key(core, new_key):
    got = verify_notice(sign_notice(dict(ROTATION, claims={"new_public_key": new_key}), OLD_PRIVATE), OLD_KEY)
    assert got.status == "invalid" and got.new_public_key is None


@pytest.mark.parametrize("member", ["id", "event", "provenance_id", "key_fingerprint", "issued_at", "claims", "signature"])
@pytest.mark.parametrize("value", [None, 1, [], {}, ""])
def test_notice_wrong_types(core, member, value):
    n = dict(NOT["vectors"][0]["notice"])
    n[member] = value
    got = verify_notice(n, OLD_KEY)
    assert got.status == "invalid"
    del n[member]
    assert verify_notice(n, OLD_KEY).status == "invalid"


def test_notice_unknown_event_and_lax_timestamp(core):
    assert verify_notice(sign_notice(dict(ROTATION, event="key-rotated"), OLD_PRIVATE), OLD_KEY).status == "invalid"
    assert verify_notice(sign_notice(dict(ROTATION, issued_at="2026-09-24"), OLD_PRIVATE), OLD_KEY).status == "invalid"


@pytest.mark.parametrize("version", ["0.2", "9.9", 0.1, None])
def test_notice_unknown_version(core, version):
    assert verify_notice(sign_notice(dict(ROTATION, notice=version), OLD_PRIVATE), OLD_KEY).status == "unchecked"


# -- challenges and revocations -------------------------------------------------------------

PID = "provenance:domain:agent.example.com"


@pytest.mark.parametrize("backend", BACKENDS)
def test_challenge_round_trip_and_separation(core, backend):
    nonce = new_nonce()
    assert len(nonce) == 64 and nonce != new_nonce()
    assert challenge_payload(PID, nonce) == b"provenance-challenge-v1:" + PID.encode() + b":" + nonce.encode()
    sig = sign_challenge(PID, nonce, OLD_PRIVATE)
    assert verify_challenge(PID, nonce, sig, OLD_KEY, backend=backend).valid
    assert verify_challenge(PID, new_nonce(), sig, OLD_KEY, backend=backend).status == "invalid"
    assert verify_challenge(PID, nonce, sig, NEW_PRIVATE.public_key, backend=backend).status == "invalid"
    assert verify_challenge(PID, nonce, sig, None).status == "unchecked"
    # a challenge for the nonce "REVOKE" is not a revocation, in either direction
    revoke_like = sign_challenge(PID, "REVOKE", OLD_PRIVATE)
    assert verify_revocation(PID, revoke_like, OLD_KEY, backend=backend).status == "invalid"
    rev = sign_revocation(PID, OLD_PRIVATE)
    assert revocation_payload(PID) == b"provenance-revocation-v1:" + PID.encode()
    assert verify_revocation(PID, rev, OLD_KEY, backend=backend).valid
    assert verify_challenge(PID, "REVOKE", rev, OLD_KEY, backend=backend).status == "invalid"


@pytest.mark.parametrize("pid, nonce", [("", "n"), (PID, ""), (None, "n"), (PID, 5), ("\ud800", "n"), (PID, "\udfff")])
def test_challenge_bad_inputs(core, pid, nonce):
    with pytest.raises(ValidationError):
        challenge_payload(pid, nonce)
    assert verify_challenge(pid, nonce, "A" * 88, OLD_KEY).status == "invalid"


@pytest.mark.parametrize("sig", [None, 5, "", "A" * 87, "A" * 88 + "=", b"\x00" * 64])
def test_revocation_bad_signatures(core, sig):
    assert verify_revocation(PID, sig, OLD_KEY).status == "invalid"
