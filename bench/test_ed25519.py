"""Ed25519 verify of an offer's signing bytes: ajpcore (strict byte checks + library) against
the raw libraries verifying the same precomputed bytes.

Target (issue 33): ajpcore-c's default verify (libsodium, called by the core without the GIL)
costs at most 1.05x raw ``nacl.bindings.crypto_sign_open`` of the same signed bytes, for
``Ed25519PublicKey.verify`` of the bytes and for ``ajpcore.verify`` of the signed body (which
also parses the signature text and canonicalizes the body).  The raw contender gets the
``signature || message`` string libsodium wants ready-made.
"""

import base64

import nacl.bindings
import nacl.signing
import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

import ajpcore
from ajpcore import Ed25519PrivateKey, Ed25519PublicKey
from data import value
from fair import measure

GROUP = "ed25519-verify:offer"
_SEED = bytes(range(32))


def _material():
    offer = {k: v for k, v in value("offer").items() if k != "signature"}
    data = ajpcore.canonicalize(offer)
    private = Ed25519PrivateKey.from_seed(_SEED)
    return offer, private.public_key.raw, data, private.sign(data)


OFFER, RAW_KEY, DATA, SIG = _material()


def _twin(module):
    return "ajpcore-" + module.__name__.rsplit("_", 1)[1]


def test_ajpcore(benchmark, core_twin):
    benchmark.group = GROUP
    benchmark.name = _twin(core_twin)
    key = Ed25519PublicKey.from_bytes(RAW_KEY)
    assert measure(benchmark, key.verify, SIG, DATA) is None


def test_ajpcore_signed_body(benchmark, core_twin):
    benchmark.group = GROUP
    benchmark.name = _twin(core_twin) + " (signed body)"
    key = Ed25519PublicKey.from_bytes(RAW_KEY)
    body = dict(OFFER, signature="ed25519:" + base64.b64encode(SIG).decode("ascii"))
    assert measure(benchmark, ajpcore.verify, body, public_key=key) is None


def test_ajpcore_over_cryptography(benchmark, core_twin):
    benchmark.group = GROUP
    benchmark.name = _twin(core_twin) + " (openssl)"
    key = Ed25519PublicKey.from_bytes(RAW_KEY)
    assert measure(benchmark, key.verify, SIG, DATA, backend="cryptography") is None


def test_cryptography(benchmark):
    benchmark.group = GROUP
    benchmark.name = "cryptography verify"
    key = ed25519.Ed25519PublicKey.from_public_bytes(RAW_KEY)
    assert measure(benchmark, key.verify, SIG, DATA) is None


def test_pynacl(benchmark):
    benchmark.group = GROUP
    benchmark.name = "pynacl VerifyKey.verify"
    key = nacl.signing.VerifyKey(RAW_KEY)
    assert measure(benchmark, key.verify, DATA, SIG) == DATA


def test_crypto_sign_open(benchmark):
    benchmark.group = GROUP
    benchmark.name = "nacl crypto_sign_open"
    signed = SIG + DATA
    assert measure(benchmark, nacl.bindings.crypto_sign_open, signed, RAW_KEY) == DATA


@pytest.mark.parametrize("backend", [None, "cryptography", "pynacl"])
def test_bench_material_is_refused_when_tampered(core_twin, backend):
    key = Ed25519PublicKey.from_bytes(RAW_KEY)
    with pytest.raises(ajpcore.BadSignature):
        key.verify(SIG, DATA + b" ", backend=backend)
