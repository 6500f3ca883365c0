"""Properties of sign / verify for arbitrary bodies, on both core twins and both Ed25519 backends."""

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ajpcore._core as _core
from ajpcore import BadSignature, LegacySignature, sign, signing_bytes, verify
from ajpcore.keys import Ed25519PrivateKey
from ajpcore.strategies import json_strings, json_values

SETTINGS = settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
PRIVATE = Ed25519PrivateKey.from_seed(bytes(range(32)))
PUBLIC = PRIVATE.public_key

# JSON values with a canonical form (the public strategies), plus the numbers where JCS and
# naive serializers part ways.
values = st.one_of(json_values(max_leaves=20, max_size=4), st.sampled_from([5.0, -0.0, 1e-7, 1e21, 1e16, 2**64]))
bodies = st.dictionaries(st.one_of(json_strings, st.sampled_from(["signature", "a", "\U0001f680", "\u00e9"])), values, max_size=6)
secrets = st.one_of(st.binary(min_size=1, max_size=80), st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40))


def with_signature(body, signature):
    out = dict(body)
    out["signature"] = signature
    return out


def paths(value, prefix=()):
    """Every position in ``value`` (containers and leaves, at every depth), the root excluded."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for k, v in items:
        yield prefix + (k,)
        yield from paths(v, prefix + (k,))


def replaced(value, path, new):
    out = copy.deepcopy(value)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


@SETTINGS
@given(body=bodies, secret=secrets)
def test_hmac_round_trip(core, body, secret):
    before = copy.deepcopy(body)
    signature = sign(body, secret=secret)
    assert body == before  # never mutated
    verify(with_signature(body, signature), secret=secret)
    assert body == before


@SETTINGS
@given(body=bodies, backend=st.sampled_from([None, "cryptography"]))
def test_ed25519_round_trip(core, body, backend):
    before = copy.deepcopy(body)
    signature = sign(body, private_key=PRIVATE)
    verify(with_signature(body, signature), public_key=PUBLIC, backend=backend)
    assert body == before


@SETTINGS
@given(body=bodies.filter(lambda b: any(k != "signature" for k in b)), data=st.data())
def test_changing_any_value_at_any_depth_fails(core, body, data):
    rest = {k: v for k, v in body.items() if k != "signature"}
    path = data.draw(st.sampled_from(sorted(paths(rest), key=repr)))
    new = data.draw(values)
    tampered_rest = replaced(rest, path, new)
    if core.canonicalize(tampered_rest) == core.canonicalize(rest):
        return  # drew an equal value (e.g. 1 for 1.0): nothing changed
    for key in ({"secret": b"k"}, {"private_key": PRIVATE}):
        signature = sign(rest, **key)
        check = {"secret": b"k"} if "secret" in key else {"public_key": PUBLIC}
        # A change can at most make the body look like a legacy-signed one: refused either way.
        with pytest.raises((BadSignature, LegacySignature)):
            verify(with_signature(tampered_rest, signature), **check)


@SETTINGS
@given(body=bodies, secret=secrets, cuts=st.lists(st.integers(0, 10_000), max_size=8), chunk=st.integers(1, 300))
def test_any_chunking_gives_the_same_mac(core, body, secret, cuts, chunk):
    expected = sign(body, secret=secret)
    data = signing_bytes(body)
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    signer = core.HmacSigner(secret)
    for start, end in zip(bounds, bounds[1:]):
        signer.update(data[start:end])
    assert "sha256:" + signer.hexdigest() == expected
    streamed = core.HmacSigner(secret)
    core.canonicalize_into({k: v for k, v in body.items() if k != "signature"}, streamed.update, chunk_size=chunk)
    assert "sha256:" + streamed.hexdigest() == expected


@settings(max_examples=40)
@given(body=bodies, secret=secrets)
def test_twins_sign_alike(twins, body, secret):
    native, pure = twins
    results = []
    saved = _core.impl
    try:
        for twin in (native, pure):
            _core.impl = twin
            results.append((sign(body, secret=secret), sign(body, private_key=PRIVATE)))
    finally:
        _core.impl = saved
    assert results[0] == results[1]
