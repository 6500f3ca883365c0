"""Ed25519 verify of an offer's signing bytes: ajpcore (strict byte checks + library) against
the raw libraries verifying the same precomputed bytes.

Target: ajpcore-c ``Ed25519PublicKey.verify`` with the default backend (libsodium through
PyNaCl) costs at most 1.10x raw ``nacl.bindings.crypto_sign_open`` of the same signed
bytes.  Only the verification is timed: the signing bytes (``canonicalize`` of the offer
without its signature) are computed once, outside; the raw contender even gets the
``signature || message`` string libsodium wants ready-made.
"""

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
    return private.public_key.raw, data, private.sign(data)


RAW_KEY, DATA, SIG = _material()


def _twin(module):
    return "ajpcore-" + module.__name__.rsplit("_", 1)[1]


def test_ajpcore(benchmark, core_twin):
    benchmark.group = GROUP
    benchmark.name = _twin(core_twin)
    key = Ed25519PublicKey.from_bytes(RAW_KEY)
    assert measure(benchmark, key.verify, SIG, DATA) is None


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
