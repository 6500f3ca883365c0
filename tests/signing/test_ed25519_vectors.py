"""Every Ed25519 known-answer vector gets its expected verdict through ajpcore,
on both core twins (``core`` fixture) and both crypto backends (``backend``).

Expected verdicts under the strict policy:

- Wycheproof ``ed25519_test.json`` and RFC 8032: the file's ``result`` exactly
  (none of their 151 + 5 cases is one the strict policy treats differently).
- ed25519-speccheck ``cases.json`` stores no verdict; its README table gives what
  the cofactorless equation says (V/X).  ``SPECCHECK_STRICT`` lists every case
  where the strict policy refuses although the equation holds, with the refusal.
- ``ajpcore_crafted.json``: its ``strict`` field.  ``CRAFTED_STRICT`` lists the
  cases whose ``cofactorless`` flag is true but which the policy refuses.
- ``small_order_encodings.json``: each encoding is refused as a key and as R.
"""

from __future__ import annotations

import base64
from typing import Dict, List, Optional, Tuple

import nacl.bindings
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed25519 as ossl_ed25519
from hypothesis import given, settings
from hypothesis import strategies as st

from ajpcore import BadSignature, Ed25519PrivateKey, Ed25519PublicKey, KeyFormatError, WeakKey
from ajpcore.keys import SPKI_PREFIX
from vector_files import load_json

BACKENDS = ["cryptography", "pynacl"]

Refusal = Optional[Tuple[str, str]]

SMALL_ORDER_KEY = ("WeakKey", "Ed25519 public key has small order")
SMALL_ORDER_R = ("BadSignature", "Ed25519 signature R has small order")
S_NOT_REDUCED = ("BadSignature", "Ed25519 signature S is not reduced (S >= L)")
MISMATCH = ("BadSignature", "Ed25519 signature does not match the data and key")
KEY_X0_SIGN = ("WeakKey", "Ed25519 public key is not canonically encoded (x = 0 with the sign bit set)")
R_X0_SIGN = ("BadSignature", "Ed25519 signature R is not canonically encoded (x = 0 with the sign bit set)")
KEY_Y_GE_P = ("WeakKey", "Ed25519 public key is not canonically encoded (y >= p)")
TORSION = (
    "WeakKey",
    "Ed25519 public key is not in the prime-order subgroup (torsion component, or not on the curve)",
)

# speccheck README: what the cofactorless equation gives for each case (index 0..11).
SPECCHECK_COFACTORLESS = "VVVVXXVVVVVV"
# Cases where the cofactorless equation holds but the strict policy refuses, and why.
SPECCHECK_STRICT: Dict[int, Tuple[Tuple[str, str], str]] = {
    0: (SMALL_ORDER_KEY, "A (and R) of small order, S = 0"),
    1: (SMALL_ORDER_KEY, "A of small order"),
    2: (SMALL_ORDER_R, "R of small order"),
    6: (S_NOT_REDUCED, "S > L"),
    7: (S_NOT_REDUCED, "S >> L (high bit set)"),
    8: (R_X0_SIGN, "non-canonical R (small order, x = 0 with sign bit)"),
    9: (R_X0_SIGN, "non-canonical R (small order, x = 0 with sign bit)"),
    10: (KEY_X0_SIGN, "non-canonical A (small order, x = 0 with sign bit)"),
    11: (KEY_X0_SIGN, "non-canonical A (small order, x = 0 with sign bit)"),
}
# Refusals where the equation itself fails (both libraries agree on those anyway).
SPECCHECK_EQUATION_FAILS = {4: MISMATCH, 5: MISMATCH}
# Case 3 (mixed-order A and R, both equations hold) passes the v1 policy; only the
# optional torsion check refuses it (A has a torsion component).
SPECCHECK_TORSION_REFUSED = {2, 3, 4, 5, 8, 9}

# Crafted cases whose `cofactorless` flag is true but which the strict policy refuses.
CRAFTED_STRICT: Dict[str, Tuple[Tuple[str, str], str]] = {
    "identity-key-universal-forgery": (SMALL_ORDER_KEY, "A = identity: verifies for every message"),
    "identity-alias-y=p+1": (KEY_Y_GE_P, "identity encoded with y = p + 1"),
    "identity-alias-negative-zero": (KEY_X0_SIGN, "identity encoded with x = 0 and the sign bit set"),
    "honest-S-plus-L": (S_NOT_REDUCED, "malleated S + L"),
}
CRAFTED_OTHER_REFUSALS = {"mixed-order-R-cofactored-only": MISMATCH}


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def ajpcore_verdict(pk: bytes, msg: bytes, sig: bytes, backend: Optional[str], *, check_torsion: bool = False) -> Refusal:
    """None if ajpcore accepts, else (error class name, message)."""
    try:
        key = Ed25519PublicKey.from_bytes(pk)
        if check_torsion:
            key.check_torsion()
        key.verify(sig, msg, backend=backend)
    except (KeyFormatError, BadSignature) as exc:
        return type(exc).__name__, str(exc)
    return None


def raw_cryptography_accepts(pk: bytes, msg: bytes, sig: bytes) -> bool:
    try:
        ossl_ed25519.Ed25519PublicKey.from_public_bytes(pk).verify(sig, msg)
    except (InvalidSignature, ValueError):
        return False
    return True


def raw_pynacl_accepts(pk: bytes, msg: bytes, sig: bytes) -> bool:
    try:
        nacl.bindings.crypto_sign_open(sig + msg, pk)
    except Exception:  # BadSignatureError, or ValueError for a wrong-length signature
        return False
    return True


def _wycheproof_cases() -> List[Tuple[str, bytes, bytes, bytes, str]]:
    data = load_json("wycheproof", "ed25519_test.json")
    cases = []
    for group in data["testGroups"]:
        pk = bytes.fromhex(group["publicKey"]["pk"])
        for t in group["tests"]:
            cases.append((f"tc{t['tcId']}", pk, bytes.fromhex(t["msg"]), bytes.fromhex(t["sig"]), t["result"]))
    return cases


WYCHEPROOF = _wycheproof_cases()
RFC8032 = load_json("ed25519", "rfc8032_ed25519.json")["tests"]
SPECCHECK = load_json("ed25519", "speccheck_cases.json")
CRAFTED = load_json("ed25519", "ajpcore_crafted.json")["tests"]
SMALL_ORDER = load_json("ed25519", "small_order_encodings.json")["encodings"]


def _all_cases() -> List[Tuple[str, bytes, bytes, bytes]]:
    cases = [(n, pk, m, s) for n, pk, m, s, _ in WYCHEPROOF]
    cases += [(t["name"], bytes.fromhex(t["public_key"]), bytes.fromhex(t["message"]), bytes.fromhex(t["signature"])) for t in RFC8032]
    cases += [(f"speccheck-{i}", bytes.fromhex(t["pub_key"]), bytes.fromhex(t["message"]), bytes.fromhex(t["signature"])) for i, t in enumerate(SPECCHECK)]
    cases += [(t["name"], bytes.fromhex(t["public_key"]), bytes.fromhex(t["message"]), bytes.fromhex(t["signature"])) for t in CRAFTED]
    return cases


def test_vector_counts():
    assert {t["strict"].split(":")[0] for t in CRAFTED} == {"accept", "reject", "policy"}
    assert len(WYCHEPROOF) == 151
    assert len(RFC8032) == 5
    assert len(SPECCHECK) == 12 == len(SPECCHECK_COFACTORLESS)
    assert len(SMALL_ORDER) == 14


# -- Wycheproof --


@pytest.mark.parametrize("name, pk, msg, sig, result", WYCHEPROOF, ids=[c[0] for c in WYCHEPROOF])
def test_wycheproof(core, backend, name, pk, msg, sig, result):
    refusal = ajpcore_verdict(pk, msg, sig, backend)
    assert (refusal is None) == (result == "valid"), refusal
    if refusal is not None:
        assert refusal[0] == "BadSignature"  # no Wycheproof key is weak


# -- RFC 8032 §7.1 --


@pytest.mark.parametrize("t", RFC8032, ids=[t["name"] for t in RFC8032])
def test_rfc8032_verifies(core, backend, t):
    assert t["result"] == "valid"
    pk, msg, sig = (bytes.fromhex(t[k]) for k in ("public_key", "message", "signature"))
    assert ajpcore_verdict(pk, msg, sig, backend) is None
    assert ajpcore_verdict(pk, msg + b"\x00", sig, backend) == MISMATCH


@pytest.mark.parametrize("t", RFC8032, ids=[t["name"] for t in RFC8032])
def test_rfc8032_signs_deterministically(core, t):
    key = Ed25519PrivateKey.from_seed(bytes.fromhex(t["secret_key"]))
    assert key.public_key.raw.hex() == t["public_key"]
    assert key.sign(bytes.fromhex(t["message"])).hex() == t["signature"]


# -- ed25519-speccheck --


@pytest.mark.parametrize("index", range(12))
def test_speccheck(core, backend, index):
    t = SPECCHECK[index]
    pk, msg, sig = (bytes.fromhex(t[k]) for k in ("pub_key", "message", "signature"))
    refusal = ajpcore_verdict(pk, msg, sig, backend)
    if index in SPECCHECK_STRICT:
        assert SPECCHECK_COFACTORLESS[index] == "V"  # a deliberate difference, not an equation failure
        assert refusal == SPECCHECK_STRICT[index][0]
    elif index in SPECCHECK_EQUATION_FAILS:
        assert SPECCHECK_COFACTORLESS[index] == "X"
        assert refusal == SPECCHECK_EQUATION_FAILS[index]
    else:
        assert SPECCHECK_COFACTORLESS[index] == "V"
        assert refusal is None


@pytest.mark.parametrize("index", range(12))
def test_speccheck_with_torsion_check(core, backend, index):
    t = SPECCHECK[index]
    pk, msg, sig = (bytes.fromhex(t[k]) for k in ("pub_key", "message", "signature"))
    refusal = ajpcore_verdict(pk, msg, sig, backend, check_torsion=True)
    if index in SPECCHECK_TORSION_REFUSED:
        assert refusal == TORSION
    else:
        assert refusal == ajpcore_verdict(pk, msg, sig, backend)  # the torsion check changes nothing else


# -- ajpcore crafted --


@pytest.mark.parametrize("t", CRAFTED, ids=[t["name"] for t in CRAFTED])
def test_crafted(core, backend, t):
    pk, msg, sig = (bytes.fromhex(t[k]) for k in ("public_key", "message", "signature"))
    refusal = ajpcore_verdict(pk, msg, sig, backend)
    torsion_refusal = ajpcore_verdict(pk, msg, sig, backend, check_torsion=True)
    name = t["name"]
    if t["strict"] == "accept":
        assert t["cofactorless"] is True
        assert refusal is None and torsion_refusal is None
    elif t["strict"] == "reject":
        expected = CRAFTED_STRICT[name][0] if name in CRAFTED_STRICT else CRAFTED_OTHER_REFUSALS[name]
        assert (name in CRAFTED_STRICT) == t["cofactorless"]
        assert refusal == expected
    else:  # "policy: accept (v1 strict) / reject (with torsion-free key check)"
        assert t["strict"].startswith("policy: accept")
        assert refusal is None
        assert torsion_refusal == TORSION


@pytest.mark.parametrize("name", sorted(CRAFTED_STRICT))
def test_crafted_strict_table_names_real_cases(name):
    assert name in {t["name"] for t in CRAFTED}


# -- the 14 small-order encodings --


@pytest.mark.parametrize("entry", SMALL_ORDER, ids=[e["encoding"][:4] + e["encoding"][-2:] for e in SMALL_ORDER])
def test_small_order_refused_as_key(core, entry):
    raw = bytes.fromhex(entry["encoding"])
    expected = "has small order" if entry["canonical"] else "is not canonically encoded"
    for make in (
        lambda: Ed25519PublicKey.from_bytes(raw),
        lambda: Ed25519PublicKey.from_string(base64.b64encode(SPKI_PREFIX + raw).decode()),
        lambda: Ed25519PublicKey.from_string("ed25519:" + raw.hex()),
        lambda: core.ed25519_check_public_key(raw),
    ):
        with pytest.raises(WeakKey, match=expected):
            make()


@pytest.mark.parametrize("entry", SMALL_ORDER, ids=[e["encoding"][:4] + e["encoding"][-2:] for e in SMALL_ORDER])
def test_small_order_refused_as_r(core, backend, entry):
    honest = next(t for t in CRAFTED if t["name"] == "honest-valid")
    key = Ed25519PublicKey.from_bytes(bytes.fromhex(honest["public_key"]))
    sig = bytes.fromhex(entry["encoding"]) + bytes.fromhex(honest["signature"])[32:]
    expected = "R has small order" if entry["canonical"] else "R is not canonically encoded"
    with pytest.raises(BadSignature, match=expected):
        key.verify(sig, bytes.fromhex(honest["message"]), backend=backend)


# -- why the byte checks exist --


def test_raw_libraries_disagree_and_ajpcore_does_not():
    disagreements = []
    for name, pk, msg, sig in _all_cases():
        if raw_cryptography_accepts(pk, msg, sig) != raw_pynacl_accepts(pk, msg, sig):
            disagreements.append(name)
        assert ajpcore_verdict(pk, msg, sig, "cryptography") == ajpcore_verdict(pk, msg, sig, "pynacl"), name
    # OpenSSL accepts small-order and non-canonical keys (and R) that libsodium refuses.
    assert "identity-key-universal-forgery" in disagreements
    assert {"speccheck-0", "speccheck-1", "speccheck-2"} <= set(disagreements)


@settings(max_examples=50)
@given(message=st.binary(max_size=256))
def test_identity_key_forgery_refused_for_any_message(message):
    forgery = next(t for t in CRAFTED if t["name"] == "identity-key-universal-forgery")
    sig = bytes.fromhex(forgery["signature"])
    for name in ("identity-key-universal-forgery", "identity-alias-y=p+1", "identity-alias-negative-zero"):
        pk = bytes.fromhex(next(t for t in CRAFTED if t["name"] == name)["public_key"])
        assert raw_cryptography_accepts(pk, message, sig)  # OpenSSL alone is forged for every message
        for backend in BACKENDS:
            refusal = ajpcore_verdict(pk, message, sig, backend)
            assert refusal is not None and refusal[0] == "WeakKey"


def test_identity_key_forgery_refused_on_both_twins(core, backend):
    forgery = next(t for t in CRAFTED if t["name"] == "identity-key-universal-forgery")
    pk = bytes.fromhex(forgery["public_key"])
    with pytest.raises(WeakKey):
        core.ed25519_check_public_key(pk)
    with pytest.raises(WeakKey):
        Ed25519PublicKey.from_string("ed25519:" + pk.hex())
    assert ajpcore_verdict(pk, b"any message at all", bytes.fromhex(forgery["signature"]), backend) == SMALL_ORDER_KEY

