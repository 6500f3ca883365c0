"""What verifying an Agent Card may cost (issue 29 §4), on both core twins (the `core` fixture).

- ``verify_card`` tries at most ``max_signatures`` entries (default 8); a card carrying
  more is refused (``MalformedCard``) before any verification.  Before, 1,000 bogus
  signatures were 3,000 verifications (2.8 MB card: 3.5 s).
- Each signature is verified under a weaker profile only when that profile's payload
  differs from those already tried: verifying any card of at most 64 KiB costs at most
  the cap x one verification x the profiles, counted here verification by verification.
- ``KeySet.from_jwks`` refuses RSA public exponents that are even, below 3 or above
  2^32 - 1 (a 3,072-bit ``e`` made 200 bogus RS256 entries cost 7.9 s).
"""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

import ajpcore
from ajpcore import a2a
from ajpcore.a2a import _card
from ajpcore.keys import Ed25519PrivateKey

ED = Ed25519PrivateKey.from_seed(bytes(range(32)))
EC = ec.derive_private_key(12345678901234567890, ec.SECP256R1())
RSA = rsa.generate_private_key(65537, 2048)
KEYS = {"ed": ("EdDSA", ED), "ec": ("ES256", EC), "rs": ("RS256", RSA), "ps": ("PS256", RSA)}
JWKS = {"keys": [a2a.jwk_from_key(key, kid=kid) for kid, (_, key) in KEYS.items()]}
SIZES = {"EdDSA": 64, "ES256": 64, "RS256": 256, "PS256": 256}
LIMIT = 64 * 1024


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def bogus(kid: str, n: int) -> dict:
    """A well-formed entry whose signature does not verify (its bytes pass every shape check)."""
    alg = KEYS[kid][0]
    protected = b64u(json.dumps({"alg": alg, "kid": kid}, separators=(",", ":")).encode())
    raw = bytearray(SIZES[alg])
    raw[0], raw[-1] = 1, (n % 250) + 1  # r, s in [1, n) for ES256; any value below n for RSA
    return {"protected": protected, "signature": b64u(bytes(raw))}


def card_of(size: int, differs: bool) -> dict:
    """A card of about ``size`` bytes; with ``differs`` its three profiles give three payloads."""
    card = {"name": "A", "description": "x" * size, "version": "1",
            "capabilities": {"streaming": True}, "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["w"]}]}
    if differs:
        card["capabilities"]["extensions"] = []  # an empty list: dropped by `spec` and `sdk`
        card["iconUrl"] = ""  # an empty string: dropped by `sdk` only
    return card


@pytest.fixture
def counted(monkeypatch):
    """The number of signature verifications ``verify_card`` runs (each still runs for real)."""
    calls = [0]
    real = _card.verify_signature

    def verify_signature(*args):
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(_card, "verify_signature", verify_signature)
    return calls


def test_more_signatures_than_the_cap_are_refused_before_any_verification(core, counted):
    card = card_of(100, differs=False)
    card["signatures"] = [bogus("ed", i) for i in range(1000)]
    with pytest.raises(ajpcore.MalformedCard, match="carries 1000 signatures; at most 8 are verified"):
        a2a.verify_card(card, JWKS)
    assert counted[0] == 0


def test_the_cap_is_a_keyword(core, counted):
    card = card_of(100, differs=False)
    entries = [bogus("ed", i) for i in range(8)]
    card["signatures"] = entries + a2a.sign_card(card_of(100, False), ED, kid="ed", alg="EdDSA")["signatures"]
    with pytest.raises(ajpcore.MalformedCard, match="carries 9 signatures"):
        a2a.verify_card(card, JWKS)
    verified = a2a.verify_card(card, JWKS, max_signatures=9)
    assert verified.kid == "ed" and [r.valid for r in verified.signatures] == [False] * 8 + [True]
    for wrong in (0, -1, True, 8.0, "8", None):
        with pytest.raises(ajpcore.KeyUsageError, match="max_signatures"):
            a2a.verify_card(card, JWKS, max_signatures=wrong)


@pytest.mark.parametrize("differs", [False, True], ids=["one-payload", "three-payloads"])
def test_verifying_a_64_kib_card_costs_at_most_cap_times_profiles(core, counted, differs):
    card = card_of(LIMIT - 4_000, differs)
    kids = ["ed", "ec", "rs", "ps"] * 2
    card["signatures"] = [bogus(kid, i) for i, kid in enumerate(kids)]
    assert len(ajpcore.canonicalize(card)) <= LIMIT
    with pytest.raises(ajpcore.BadSignature):
        a2a.verify_card(card, JWKS)
    payloads = {a2a.payload(card, p) for p in a2a.PROFILES}
    assert len(payloads) == (3 if differs else 1)
    # Each signature once per distinct payload: before, once per profile (24 here, whatever the card).
    assert counted[0] == _card.MAX_SIGNATURES * len(payloads) <= _card.MAX_SIGNATURES * len(a2a.PROFILES)


def test_a_signature_under_a_weaker_profile_still_verifies(core, counted):
    card = card_of(100, differs=True)
    signed = a2a.sign_card(card, ED, kid="ed", alg="EdDSA", profile="sdk")
    verified = a2a.verify_card(signed, JWKS)
    assert verified.profile == "sdk" and counted[0] == 3


def rsa_jwk(e: int, kid: str = "rs") -> dict:
    n = RSA.public_key().public_numbers().n
    octets = lambda v: b64u(v.to_bytes((v.bit_length() + 7) // 8, "big"))  # noqa: E731
    return {"kty": "RSA", "kid": kid, "n": octets(n), "e": octets(e)}


@pytest.mark.parametrize("e", [3, 65537, 2**32 - 1])
def test_usual_rsa_exponents_are_read(e):
    assert a2a.KeySet.from_jwks({"keys": [rsa_jwk(e)]})["rs"].kty == "RSA"


@pytest.mark.parametrize("e", [1, 2, 65536, 2**32 + 1, 2**2000 + 1], ids=["1", "2", "even", "2^32+1", "2001-bit"])
def test_unusual_rsa_exponents_are_refused(e):
    with pytest.raises(ajpcore.JwkError, match="RSA public exponent of .* bits \\(expected an odd e from 3 to 2\\^32 - 1\\)"):
        a2a.KeySet.from_jwks({"keys": [rsa_jwk(e)]})
