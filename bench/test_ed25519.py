"""Ed25519 verify of an offer's signing bytes: ajpcore (strict byte checks + library) against
the raw libraries verifying the same precomputed bytes.

Target: ajpcore-c ``Ed25519PublicKey.verify`` (default backend, OpenSSL) costs at most
1.10x raw ``cryptography`` verify.  Only the verification is timed: the signing bytes
(``canonicalize`` of the offer without its signature) are computed once, outside.
"""

import nacl.signing
import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

import ajpcore
from ajpcore import Ed25519PrivateKey, Ed25519PublicKey
from data import value

GROUP = "ed25519-verify:offer"
_SEED = bytes(range(32))


def _material():
    offer = {k: v for k, v in value("offer").items() if k != "signature"}
    data = ajpcore.canonicalize(offer)
    private = Ed25519PrivateKey.from_seed(_SEED)
    return private.public_key.raw, data, private.sign(data)


RAW_KEY, DATA, SIG = _material()


def test_ajpcore(benchmark, core_twin):
    benchmark.group = GROUP
    key = Ed25519PublicKey.from_bytes(RAW_KEY)
    assert benchmark(key.verify, SIG, DATA) is None


def test_ajpcore_over_pynacl(benchmark, core_twin):
    benchmark.group = GROUP
    key = Ed25519PublicKey.from_bytes(RAW_KEY)
    assert benchmark(key.verify, SIG, DATA, backend="pynacl") is None


def test_cryptography(benchmark):
    benchmark.group = GROUP
    key = ed25519.Ed25519PublicKey.from_public_bytes(RAW_KEY)
    assert benchmark(key.verify, SIG, DATA) is None


def test_pynacl(benchmark):
    benchmark.group = GROUP
    key = nacl.signing.VerifyKey(RAW_KEY)
    assert benchmark(key.verify, DATA, SIG) == DATA


@pytest.mark.parametrize("backend", [None, "pynacl"])
def test_bench_material_is_refused_when_tampered(core_twin, backend):
    key = Ed25519PublicKey.from_bytes(RAW_KEY)
    with pytest.raises(ajpcore.BadSignature):
        key.verify(SIG, DATA + b" ", backend=backend)
