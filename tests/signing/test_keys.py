"""ajpcore.keys: strict text forms, fingerprints, caching, signing and verification
on both core twins and both crypto backends; the twins' byte checks agree."""

from __future__ import annotations

import base64
import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ajpcore
from ajpcore import (
    BadSignature,
    Ed25519PrivateKey,
    Ed25519PublicKey,
    KeyFormatError,
    KeyUsageError,
    MalformedSignature,
    WeakKey,
)
from ajpcore.keys import PKCS8_PREFIX, SPKI_PREFIX
from vector_files import load_json

BACKENDS = ["cryptography", "pynacl"]
P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493

DECLARATIONS = load_json("provenance", "provenance-npm-0.3.0-testvectors-declarations-0.2.json")
SIGNATURES_01 = load_json("provenance", "provenance-npm-0.3.0-testvectors-signatures-0.1.json")
REFERENCE_PUBLIC = DECLARATIONS["keypair"]["public_key"]
REFERENCE_PRIVATE = DECLARATIONS["keypair"]["private_key"]
# Given by the Provenance vectors' README for the reference test key.
REFERENCE_FINGERPRINT = "6a54646bde8ee38b578d1db85eec8f993db211d8fd98a12471ef00ec4067a21a"
HONEST = next(t for t in load_json("ed25519", "ajpcore_crafted.json")["tests"] if t["name"] == "honest-valid")


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def _outcome(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the class and message are what is compared
        return type(exc), str(exc)
    return None


# -- text forms --


def test_reference_key_fingerprint(core):
    key = Ed25519PublicKey.from_string(REFERENCE_PUBLIC)
    assert key.fingerprint == REFERENCE_FINGERPRINT
    assert key.fingerprint == hashlib.sha256(base64.b64decode(REFERENCE_PUBLIC)).hexdigest()
    assert key.to_string() == key.to_string("spki") == REFERENCE_PUBLIC
    assert key.raw == base64.b64decode(REFERENCE_PUBLIC)[12:]


@pytest.mark.parametrize("pair", [DECLARATIONS["keypair"], SIGNATURES_01["keypair"]], ids=["0.2", "0.1"])
def test_reference_private_keys_match_their_public_keys(core, pair):
    private = Ed25519PrivateKey.from_string(pair["private_key"])
    assert private.to_string() == pair["private_key"]
    assert private.public_key == Ed25519PublicKey.from_string(pair["public_key"])
    assert private.public_key.to_string() == pair["public_key"]


def test_public_key_forms_round_trip(core):
    key = Ed25519PublicKey.from_string(REFERENCE_PUBLIC)
    iatp = key.to_string("ed25519")
    assert iatp == "ed25519:" + base64.b64encode(key.raw).decode()
    for text in (REFERENCE_PUBLIC, iatp, "ed25519:" + key.raw.hex()):
        assert Ed25519PublicKey.from_string(text) == key
        assert Ed25519PublicKey.from_string(text).fingerprint == REFERENCE_FINGERPRINT
    assert Ed25519PublicKey.from_bytes(key.raw) == key
    assert Ed25519PublicKey.from_bytes(bytearray(key.raw)) == key
    assert hash(Ed25519PublicKey.from_bytes(memoryview(key.raw))) == hash(key)
    assert REFERENCE_PUBLIC in repr(key)


def test_key_cache_returns_the_same_object():
    assert Ed25519PublicKey.from_string(REFERENCE_PUBLIC) is Ed25519PublicKey.from_string(REFERENCE_PUBLIC)
    assert Ed25519PrivateKey.from_string(REFERENCE_PRIVATE) is Ed25519PrivateKey.from_string(REFERENCE_PRIVATE)


_raw = base64.b64decode(REFERENCE_PUBLIC)[12:]
_spki = REFERENCE_PUBLIC
_b64raw = base64.b64encode(_raw).decode()
BAD_PUBLIC = [
    (_spki + "\n", "must be 60 base64 characters"),
    (" " + _spki[1:], "not padded standard base64"),
    (_spki[:30] + " " + _spki[31:], "not padded standard base64"),
    (_spki[:-2] + "9=", "not canonical base64"),  # non-zero pad bits
    (_spki.replace("+", "-").replace("/", "_"), "not padded standard base64"),
    (_spki[:-1], "must be 60 base64 characters"),
    (_spki[:-1] + "A", "must decode to 44 bytes"),
    (base64.b64encode(bytes.fromhex("302a300506032b6570032200") + _raw).decode(), "wrong DER prefix"),
    (base64.b64encode(bytes.fromhex("302a300506032b6571032100") + _raw).decode(), "wrong DER prefix"),
    (base64.b64encode(SPKI_PREFIX + _raw + b"\x00").decode(), "must decode to 44 bytes, got 45"),
    ("ed25519:" + _raw.hex().upper(), "hex must be lowercase"),
    ("ed25519:" + _raw.hex()[:-1] + "g", "not 64 hex digits"),
    ("ed25519:" + _raw.hex()[:-2], "44 base64 or 64 hex characters, got 62"),
    ("ed25519:" + _b64raw[:-1], "44 base64 or 64 hex characters, got 43"),
    ("ed25519:" + _b64raw[:-2] + "B=", "not canonical base64"),
    ("ED25519:" + _raw.hex(), "must be 60 base64 characters"),
    ("ed25519: " + _b64raw[1:], "not padded standard base64"),
    ("", "must be 60 base64 characters"),
    ("\uff10" * 60, "not padded standard base64"),
]


@pytest.mark.parametrize("text, message", BAD_PUBLIC)
def test_public_key_text_is_strict(core, text, message):
    with pytest.raises(KeyFormatError, match=message) as info:
        Ed25519PublicKey.from_string(text)
    assert not isinstance(info.value, WeakKey)


@pytest.mark.parametrize("value", [None, 42, b"MCow", ["x"]])
def test_public_key_wrong_types(core, value):
    with pytest.raises(KeyFormatError, match="must be str"):
        Ed25519PublicKey.from_string(value)
    with pytest.raises(KeyFormatError, match="must be bytes"):
        Ed25519PublicKey.from_bytes(value if not isinstance(value, bytes) else "str")


@pytest.mark.parametrize("length", [0, 31, 33, 64])
def test_public_key_wrong_length(core, length):
    with pytest.raises(KeyFormatError, match=f"must be 32 bytes, got {length}"):
        Ed25519PublicKey.from_bytes(b"\x09" * length)


BAD_PRIVATE = [
    (REFERENCE_PRIVATE + "\n", "must be 64 base64 characters"),
    (REFERENCE_PRIVATE[:-1] + "=", "must decode to 48 bytes"),
    (REFERENCE_PRIVATE[:10] + "*" + REFERENCE_PRIVATE[11:], "not padded standard base64"),
    (base64.b64encode(bytes.fromhex("302e020101300506032b657004220420") + bytes(32)).decode(), "wrong DER prefix"),
    (REFERENCE_PUBLIC, "must be 64 base64 characters"),
]


@pytest.mark.parametrize("text, message", BAD_PRIVATE)
def test_private_key_text_is_strict(core, text, message):
    with pytest.raises(KeyFormatError, match=message) as info:
        Ed25519PrivateKey.from_string(text)
    assert base64.b64decode(REFERENCE_PRIVATE)[16:].hex() not in str(info.value)


def test_private_key_seed_and_types(core):
    with pytest.raises(KeyFormatError, match="must be 32 bytes, got 31"):
        Ed25519PrivateKey.from_seed(bytes(31))
    with pytest.raises(KeyFormatError, match="must be bytes"):
        Ed25519PrivateKey.from_seed("0" * 32)
    with pytest.raises(KeyFormatError, match="must be str"):
        Ed25519PrivateKey.from_string(b"MC4C")
    key = Ed25519PrivateKey.from_string(REFERENCE_PRIVATE)
    assert key.seed() == base64.b64decode(REFERENCE_PRIVATE)[16:]
    assert Ed25519PrivateKey.from_seed(bytearray(key.seed())) == key
    assert key.to_string() not in repr(key)
    assert base64.b64decode(key.to_string())[:16] == PKCS8_PREFIX


def test_constructors_are_private():
    with pytest.raises(KeyUsageError):
        Ed25519PublicKey(b"\x00" * 32)
    with pytest.raises(KeyUsageError):
        Ed25519PrivateKey(None)


def test_to_string_unknown_form():
    with pytest.raises(KeyUsageError, match="unknown public key form `hex`"):
        Ed25519PublicKey.from_string(REFERENCE_PUBLIC).to_string("hex")


# -- sign and verify --


def test_sign_verify_both_backends(core, backend):
    key = Ed25519PrivateKey.generate()
    sig = key.sign(b"message")
    assert len(sig) == 64
    key.public_key.verify(sig, b"message", backend=backend)
    key.public_key.verify(bytearray(sig), memoryview(b"message"), backend=backend)
    with pytest.raises(BadSignature, match="does not match"):
        key.public_key.verify(sig, b"messagE", backend=backend)
    other = Ed25519PrivateKey.generate().public_key
    with pytest.raises(BadSignature, match="does not match"):
        other.verify(sig, b"message", backend=backend)


def test_default_backend_is_libsodium(core, monkeypatch):
    # PyNaCl is a dependency, so a verify without `backend` goes through libsodium, and
    # `backend="cryptography"` through OpenSSL: each call is seen by the library meant.
    import ajpcore.keys as keys

    assert keys.DEFAULT_BACKEND == "pynacl"
    calls = []
    real_verify = core.ed25519_sodium_verify

    def spy(sig, data, raw):
        calls.append("pynacl")
        return real_verify(sig, data, raw)

    monkeypatch.setattr(core, "ed25519_sodium_verify", spy)
    private = Ed25519PrivateKey.generate()
    sig = private.sign(b"message")
    private.public_key.verify(sig, b"message")
    assert calls == ["pynacl"]
    with pytest.raises(BadSignature, match="does not match"):
        private.public_key.verify(sig, b"messagE")
    assert calls == ["pynacl", "pynacl"]
    private.public_key.verify(sig, b"message", backend="cryptography")
    with pytest.raises(BadSignature, match="does not match"):
        private.public_key.verify(sig, b"messagE", backend="cryptography")
    assert calls == ["pynacl", "pynacl"]


@pytest.mark.parametrize("length", [0, 63, 65])
def test_verify_wrong_signature_length(core, backend, length):
    key = Ed25519PublicKey.from_string(REFERENCE_PUBLIC)
    with pytest.raises(BadSignature, match=f"must be 64 bytes, got {length}"):
        key.verify(b"\x01" * length, b"", backend=backend)


def test_verify_wrong_types(core, backend):
    key = Ed25519PrivateKey.from_string(REFERENCE_PRIVATE)
    sig = key.sign(b"x")
    with pytest.raises(MalformedSignature, match="must be bytes, got `str`"):
        key.public_key.verify(base64.b64encode(sig).decode(), b"x", backend=backend)
    with pytest.raises(KeyUsageError, match="message must be bytes, got `str`"):
        key.public_key.verify(sig, "x", backend=backend)
    with pytest.raises(KeyUsageError, match="message must be bytes"):
        key.sign("x")


def test_verify_unknown_backend(core):
    key = Ed25519PrivateKey.from_string(REFERENCE_PRIVATE)
    with pytest.raises(KeyUsageError, match="unknown Ed25519 backend `openssl`"):
        key.public_key.verify(key.sign(b""), b"", backend="openssl")


def test_provenance_01_vectors(core, backend):
    for v in SIGNATURES_01["vectors"]:
        key = Ed25519PublicKey.from_string(v["public_key"])
        try:
            sig = base64.b64decode(v["signature"], validate=True)
        except ValueError:
            assert v["expect"] == "invalid"
            continue
        outcome = _outcome(key.verify, sig, v["message"].encode(), backend=backend)
        assert (outcome is None) == (v["expect"] == "valid"), v["id"]


def test_torsion_check_once_per_key(core):
    key = Ed25519PublicKey.from_string(REFERENCE_PUBLIC, check_torsion=True)
    key.check_torsion()
    mixed = next(
        t for t in load_json("ed25519", "ajpcore_crafted.json")["tests"] if t["name"] == "mixed-order-A-both-equations"
    )
    text = "ed25519:" + mixed["public_key"]
    assert Ed25519PublicKey.from_string(text).raw.hex() == mixed["public_key"]
    with pytest.raises(WeakKey, match="prime-order subgroup"):
        Ed25519PublicKey.from_string(text, check_torsion=True)


def test_errors_are_exported_and_have_statuses():
    assert issubclass(ajpcore.WeakKey, ajpcore.KeyFormatError)
    assert issubclass(KeyFormatError, ValueError)
    assert issubclass(KeyUsageError, TypeError) and issubclass(KeyUsageError, ValueError)
    assert KeyUsageError("x").status == 500


# -- hypothesis --


@settings(max_examples=40)
@given(seed=st.binary(min_size=32, max_size=32), message=st.binary(max_size=512), flip=st.integers(0, 511))
def test_random_keys_sign_and_verify_on_both_backends(seed, message, flip):
    key = Ed25519PrivateKey.from_seed(seed)
    sig = key.sign(message)
    public = Ed25519PublicKey.from_string(key.public_key.to_string())
    for backend in BACKENDS:
        public.verify(sig, message, backend=backend)
    tampered = bytearray(sig)
    tampered[flip // 8] ^= 1 << (flip % 8)
    verdicts = {_outcome(public.verify, bytes(tampered), message, backend=b) for b in BACKENDS}
    assert len(verdicts) == 1 and None not in verdicts
    if message:
        other = bytes([message[0] ^ 1]) + message[1:]
        verdicts = {_outcome(public.verify, sig, other, backend=b) for b in BACKENDS}
        assert len(verdicts) == 1 and None not in verdicts


def _near(value: int) -> st.SearchStrategy[bytes]:
    """32-byte little-endian encodings at and around ``value``, with either sign bit."""
    return st.tuples(st.integers(-40, 40), st.booleans()).map(
        lambda t: (((value + t[0]) % 2**255) | (t[1] << 255)).to_bytes(32, "little")
    )


SMALL_ORDER = [bytes.fromhex(e["encoding"]) for e in load_json("ed25519", "small_order_encodings.json")["encodings"]]
encodings32 = st.one_of(
    st.binary(min_size=32, max_size=32),
    _near(P),
    _near(0),
    _near(L),
    st.sampled_from(SMALL_ORDER),
    st.sampled_from(SMALL_ORDER).map(lambda b: b[:31] + bytes([b[31] ^ 0x80])),
)


@settings(max_examples=300)
@given(raw=st.one_of(encodings32, st.binary(max_size=40)))
def test_twins_agree_on_public_keys(twins, raw):
    native, pure = twins
    assert _outcome(native.ed25519_check_public_key, raw) == _outcome(pure.ed25519_check_public_key, raw)
    assert _outcome(native.ed25519_check_public_key, bytearray(raw)) == _outcome(pure.ed25519_check_public_key, raw)


@settings(max_examples=300)
@given(r=encodings32, s=encodings32, tail=st.one_of(st.just(b""), st.binary(min_size=1, max_size=3)))
def test_twins_agree_on_signatures(twins, r, s, tail):
    native, pure = twins
    sig = r + s[: 32 - len(tail)] + tail if tail else r + s
    assert _outcome(native.ed25519_check_signature, sig) == _outcome(pure.ed25519_check_signature, sig)
    assert _outcome(native.ed25519_check_signature, memoryview(sig)) == _outcome(pure.ed25519_check_signature, sig)


@settings(max_examples=200)
@given(r=encodings32, s=encodings32)
def test_signature_policy_matches_its_definition(twins, r, s):
    y = int.from_bytes(r, "little") & ((1 << 255) - 1)
    small_y = {int.from_bytes(b, "little") & ((1 << 255) - 1) for b in SMALL_ORDER} - {P, P + 1}
    expected_ok = y < P and y not in small_y and int.from_bytes(s, "little") < L
    for twin in twins:
        assert (_outcome(twin.ed25519_check_signature, r + s) is None) == expected_ok


@settings(max_examples=100)
@given(raw=st.binary(min_size=32, max_size=32), message=st.binary(max_size=64), sig=st.binary(min_size=64, max_size=64))
def test_backends_agree_on_arbitrary_inputs(raw, message, sig):
    try:
        key = Ed25519PublicKey.from_bytes(raw)
    except KeyFormatError:
        return
    verdicts = {_outcome(key.verify, sig, message, backend=b) for b in BACKENDS}
    assert len(verdicts) == 1


@pytest.mark.parametrize("value", [None, 1, "x" * 32, [0] * 32])
def test_twins_refuse_non_bytes_identically(twins, value):
    native, pure = twins
    for name in ("ed25519_check_public_key", "ed25519_check_signature"):
        a = _outcome(getattr(native, name), value)
        assert a == _outcome(getattr(pure, name), value)
        assert a is not None and issubclass(a[0], ajpcore.AjpError)


# -- CLI: keygen, fingerprint --


def _cli(*args, stdin=b""):
    from conftest import run_python

    return run_python("-m", "ajpcore", *args, stdin=stdin)


def test_cli_keygen_writes_0600_and_never_overwrites(tmp_path):
    import os
    import stat

    path = tmp_path / "agent.key"
    out = _cli("keygen", "--out", str(path))
    assert out.returncode == 0, out.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    private = Ed25519PrivateKey.from_string(path.read_text().rstrip("\n"))
    lines = dict(line.split(": ", 1) for line in out.stdout.decode().splitlines())
    assert lines["private_key_file"] == str(path)
    assert lines["public_key"] == private.public_key.to_string("spki")
    assert lines["public_key_ed25519"] == private.public_key.to_string("ed25519")
    assert lines["fingerprint"] == private.public_key.fingerprint
    assert private.to_string() not in out.stdout.decode()

    again = _cli("keygen", "--out", str(path))
    assert again.returncode == 2 and b"refusing to overwrite" in again.stderr
    assert Ed25519PrivateKey.from_string(path.read_text().rstrip("\n")) == private


def test_cli_fingerprint(tmp_path):
    out = _cli("fingerprint", REFERENCE_PUBLIC)
    assert (out.returncode, out.stdout) == (0, REFERENCE_FINGERPRINT.encode() + b"\n")
    raw_hex = Ed25519PublicKey.from_string(REFERENCE_PUBLIC).raw.hex()
    assert _cli("fingerprint", "ed25519:" + raw_hex).stdout == REFERENCE_FINGERPRINT.encode() + b"\n"
    key_file = tmp_path / "k"
    key_file.write_text(REFERENCE_PRIVATE + "\n")
    assert _cli("fingerprint", str(key_file)).stdout == REFERENCE_FINGERPRINT.encode() + b"\n"
    assert _cli("fingerprint", "-", stdin=REFERENCE_PUBLIC.encode()).stdout == REFERENCE_FINGERPRINT.encode() + b"\n"


@pytest.mark.parametrize(
    "key, status, message",
    [
        ("ed25519:" + "01" + "00" * 31, 1, b"small order"),
        ("ed25519:" + "AB" * 32, 2, b"lowercase"),
        (REFERENCE_PUBLIC + " ", 2, b"60 base64 characters"),
    ],
)
def test_cli_fingerprint_refuses(key, status, message):
    out = _cli("fingerprint", key)
    assert out.returncode == status
    assert out.stdout == b"" and message in out.stderr
    assert len(out.stderr.splitlines()) == 1


def test_clear_key_cache():
    first = Ed25519PublicKey.from_string(REFERENCE_PUBLIC)
    ajpcore.clear_key_cache()
    second = Ed25519PublicKey.from_string(REFERENCE_PUBLIC)
    assert second == first and second is not first


def test_unknown_backend_refused_before_the_signature_is_read(core):
    key = Ed25519PublicKey.from_string(REFERENCE_PUBLIC)
    with pytest.raises(KeyUsageError, match="unknown Ed25519 backend"):
        key.verify(b"short", b"", backend="libsodium")
