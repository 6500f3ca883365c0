"""Streaming HMAC-SHA256 (``HmacSigner``) on both core twins: RFC 4231, Wycheproof, hmac.digest parity, API."""

import hmac

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import BadSignature, KeyFormatError, KeyUsageError, SignerFinalized
from ajpcore.strategies import json_values
from vector_files import load_json

RFC4231 = load_json("hmac", "rfc4231_hmac_sha256.json")["tests"]
WYCHEPROOF = load_json("wycheproof", "hmac_sha256_test.json")
WYCHEPROOF_CASES = [
    (group["keySize"], group["tagSize"], test)
    for group in WYCHEPROOF["testGroups"]
    for test in group["tests"]
]


def mac_of(impl, key, *chunks):
    signer = impl.HmacSigner(key)
    for chunk in chunks:
        signer.update(chunk)
    return signer.finalize()


# -- known-answer vectors ------------------------------------------------------


@pytest.mark.parametrize("case", RFC4231, ids=lambda c: f"tc{c['test_case']}")
def test_rfc4231(impl, case):
    key, data, expected = bytes.fromhex(case["key"]), bytes.fromhex(case["data"]), bytes.fromhex(case["mac"])
    mac = mac_of(impl, key, data)
    assert len(mac) == 32
    if "truncate_bits" in case:
        # RFC 4231 §4.6 gives only the leftmost 128 bits: the full tag starts with them,
        # and verify refuses the truncated tag itself.
        assert mac[: case["truncate_bits"] // 8] == expected
        with pytest.raises(BadSignature, match="truncated tags are refused"):
            impl.HmacSigner(key).verify(expected)
    else:
        assert mac == expected
        signer = impl.HmacSigner(key)
        signer.update(data)
        signer.verify(expected)


def test_wycheproof_file_is_complete():
    assert len(WYCHEPROOF_CASES) == WYCHEPROOF["numberOfTests"] == 174


@pytest.mark.parametrize(
    "key_bits, tag_bits, case", WYCHEPROOF_CASES, ids=lambda x: str(x["tcId"]) if isinstance(x, dict) else str(x)
)
def test_wycheproof(impl, key_bits, tag_bits, case):
    key, msg, tag = bytes.fromhex(case["key"]), bytes.fromhex(case["msg"]), bytes.fromhex(case["tag"])
    assert len(key) * 8 == key_bits and len(tag) * 8 == tag_bits
    mac = mac_of(impl, key, msg)
    assert mac == hmac.digest(key, msg, "sha256")
    valid = case["result"] == "valid"
    assert (mac[: len(tag)] == tag) is valid
    signer = impl.HmacSigner(key)
    signer.update(msg)
    if tag_bits == 256 and valid:
        signer.verify(tag)
    else:
        # A modified tag never verifies; a truncated one (128 bits) is refused even when
        # its bits are right: AJP's sha256 signatures always carry all 256 bits.
        with pytest.raises(BadSignature):
            signer.verify(tag)


# -- parity with hmac.digest -----------------------------------------------------

keys = st.one_of(st.binary(max_size=200), st.text(max_size=80))
chunk_lists = st.lists(st.binary(max_size=300), max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=keys, chunks=chunk_lists)
def test_matches_hmac_digest(impl, key, chunks):
    raw_key = key.encode("utf-8") if isinstance(key, str) else key
    if isinstance(key, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in key):
        with pytest.raises(KeyFormatError):
            impl.HmacSigner(key)
        return
    expected = hmac.digest(raw_key, b"".join(chunks), "sha256")
    assert mac_of(impl, key, *chunks) == expected
    assert mac_of(impl, raw_key, b"".join(chunks)) == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.binary(min_size=1, max_size=100), data=st.binary(max_size=2000), cut=st.integers(0, 2000))
def test_copy_forks_the_stream(impl, key, data, cut):
    cut = min(cut, len(data))
    signer = impl.HmacSigner(key)
    signer.update(data[:cut])
    fork = signer.copy()
    fork.update(b"extra")
    signer.update(data[cut:])
    assert signer.finalize() == hmac.digest(key, data, "sha256")
    assert fork.hexdigest() == hmac.digest(key, data[:cut] + b"extra", "sha256").hex()


@pytest.mark.parametrize(
    "secret", [b"k3y", bytearray(b"k3y"), memoryview(b"k3y"), "k3y", type("S", (str,), {})("k3y"), type("B", (bytes,), {})(b"k3y")]
)
def test_secret_forms_agree(impl, secret):
    assert mac_of(impl, secret, b"msg") == hmac.digest(b"k3y", b"msg", "sha256")


def test_str_secret_is_utf8(impl):
    assert mac_of(impl, "sécret ☃", b"m") == hmac.digest("sécret ☃".encode(), b"m", "sha256")


def test_long_secret_is_hashed_first(impl):
    key = bytes(range(200))
    assert mac_of(impl, key, b"m") == hmac.digest(key, b"m", "sha256")


def test_many_secrets_stay_correct_past_the_cache_bound(impl):
    for i in range(impl.HMAC_CACHE_SIZE * 3):
        key = b"secret-%d" % i
        assert mac_of(impl, key, b"m") == hmac.digest(key, b"m", "sha256")
    impl.clear_hmac_cache()
    assert mac_of(impl, b"secret-0", b"m") == hmac.digest(b"secret-0", b"m", "sha256")


# -- refusals ---------------------------------------------------------------------


def raised(func, *args):
    with pytest.raises(Exception) as info:
        func(*args)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("secret", [None, 42, 1.5, ["k"], {"k": 1}])
def test_secret_of_another_type(twins, secret):
    native, pure = twins
    kind, message = raised(native.HmacSigner, secret)
    assert (kind, message) == raised(pure.HmacSigner, secret)
    assert kind is KeyUsageError and "must be `bytes` or `str`" in message


def test_secret_with_lone_surrogate(twins):
    native, pure = twins
    kind, message = raised(native.HmacSigner, "ab\ud800")
    assert (kind, message) == raised(pure.HmacSigner, "ab\ud800")
    assert kind is KeyFormatError


def test_update_with_str_is_refused_like_hashlib(twins):
    results = [raised(twin.HmacSigner(b"k").update, "text") for twin in twins]
    assert results[0] == results[1] and issubclass(results[0][0], TypeError)


@pytest.mark.parametrize("finish", ["finalize", "hexdigest", "verify"])
@pytest.mark.parametrize("then", ["update", "copy", "finalize", "hexdigest", "verify"])
def test_spent_signer_refuses_everything(twins, finish, then):
    messages = []
    for impl in twins:
        signer = impl.HmacSigner(b"k")
        if finish == "verify":
            with pytest.raises(BadSignature):
                signer.verify(b"\0" * 32)
        else:
            getattr(signer, finish)()
        args = {"update": (b"x",), "verify": (b"\0" * 32,)}.get(then, ())
        with pytest.raises(SignerFinalized) as info:
            getattr(signer, then)(*args)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("tag", [b"", b"\0" * 31, b"\0" * 33, "0" * 64, None, 7])
def test_verify_refuses_wrong_size_or_type(twins, tag):
    results = []
    for impl in twins:
        signer = impl.HmacSigner(b"k")
        with pytest.raises(BadSignature) as info:
            signer.verify(tag)
        results.append(str(info.value))
    assert results[0] == results[1]


def test_verify_accepts_bytes_likes(impl):
    tag = hmac.digest(b"k", b"m", "sha256")
    for form in (tag, bytearray(tag), memoryview(tag)):
        signer = impl.HmacSigner(b"k")
        signer.update(b"m")
        signer.verify(form)


def test_verify_rejects_every_single_bit_flip(impl):
    tag = hmac.digest(b"k", b"m", "sha256")
    for bit in range(256):
        flipped = bytearray(tag)
        flipped[bit // 8] ^= 1 << (bit % 8)
        signer = impl.HmacSigner(b"k")
        signer.update(b"m")
        with pytest.raises(BadSignature, match="does not match"):
            signer.verify(bytes(flipped))


# -- the streaming sink: HMAC of canonical JSON ------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values(max_leaves=20, max_size=4), key=st.binary(max_size=100), chunk=st.integers(1, 200))
def test_hmac_of_canonical_json_matches_hmac_digest(impl, value, key, chunk):
    expected = hmac.digest(key, impl.canonicalize(value), "sha256")
    assert impl.hmac_sha256_canonical(value, key, chunk_size=chunk) == expected
    assert impl.hmac_sha256_canonical(value, key) == expected


@pytest.mark.parametrize(
    "value, secret, chunk_size",
    [
        ({"a": float("nan")}, b"k", 16),
        ({"a": [1, {"b": "\ud800"}]}, b"k", 16),
        ({1: "non-str key"}, b"k", 16),
        ({"a": 1}, 3.5, 16),
        ({"a": 1}, b"k", 0),
        ({"a": 1}, b"k", "16"),
    ],
)
def test_hmac_of_canonical_json_refusals_agree(twins, value, secret, chunk_size):
    native, pure = twins
    result = raised(lambda: native.hmac_sha256_canonical(value, secret, chunk_size=chunk_size))
    assert result == raised(lambda: pure.hmac_sha256_canonical(value, secret, chunk_size=chunk_size))


class _Body(dict):
    """A dict subclass whose own ``__contains__``/``copy`` lie: read as the dict it stores."""

    def __contains__(self, key):
        return False

    def copy(self):
        return {}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.dictionaries(st.text(max_size=3), json_values(max_leaves=8, max_size=3), max_size=5),
    signature=st.one_of(st.none(), st.just("sha256:" + "0" * 64), json_values(max_leaves=3)),
    key=st.one_of(st.binary(min_size=1, max_size=100), st.text(min_size=1, max_size=20)),
    chunk=st.integers(1, 200),
    subclass=st.booleans(),
)
def test_hmac_signature_is_sha256_hex_of_the_body_without_signature(impl, body, signature, key, chunk, subclass):
    if signature is not None:
        body["signature"] = signature
    before = dict(body)
    rest = {k: v for k, v in body.items() if k != "signature"}
    raw_key = key.encode("utf-8") if isinstance(key, str) else key
    expected = "sha256:" + hmac.new(raw_key, impl.canonicalize(rest), "sha256").hexdigest()
    given = _Body(body) if subclass else body
    assert impl.hmac_sha256_signature(given, key, chunk_size=chunk) == expected
    assert impl.hmac_sha256_signature(given, key) == expected
    assert body == before and list(body) == list(before)  # not modified


@pytest.mark.parametrize(
    "body, secret",
    [
        ([("signature", "x")], b"k"),
        ("{}", b"k"),
        (None, b"k"),
        ({"a": 1}, 3.5),
        ([1], 3.5),
        ({"signature": "x", "a": float("nan")}, b"k"),
        ({"signature": "x", 1: "a non-str name"}, b"k"),
        ({"a": {"signature": float("inf")}}, b"k"),
        ({"a": 1}, "\ud800"),
    ],
)
def test_hmac_signature_refusals_agree(twins, body, secret):
    native, pure = twins
    result = raised(lambda: native.hmac_sha256_signature(body, secret))
    assert result == raised(lambda: pure.hmac_sha256_signature(body, secret))


def test_hmac_signature_ignores_only_a_top_level_signature(impl):
    nested = {"a": {"signature": "x"}, "signature": "y"}
    tag = hmac.new(b"k", b'{"a":{"signature":"x"}}', "sha256").hexdigest()
    assert impl.hmac_sha256_signature(nested, b"k") == "sha256:" + tag
    # A member named `signature` of any value is dropped: the tag covers the rest.
    assert impl.hmac_sha256_signature({"signature": [1, {"b": 2}]}, b"k") == "sha256:" + hmac.new(b"k", b"{}", "sha256").hexdigest()


def test_cache_can_be_disabled(impl, monkeypatch):
    monkeypatch.setattr(impl, "HMAC_CACHE_SIZE", 0)
    impl.clear_hmac_cache()
    for i in range(3):
        key = b"uncached-%d" % i
        assert mac_of(impl, key, b"m") == hmac.digest(key, b"m", "sha256")
    monkeypatch.setattr(impl, "HMAC_CACHE_SIZE", 2)
    for i in range(5):
        key = b"small-cache-%d" % i
        assert mac_of(impl, key, b"m") == hmac.digest(key, b"m", "sha256")
