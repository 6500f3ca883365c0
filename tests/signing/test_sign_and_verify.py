"""sign / verify / signing_bytes over message bodies, on both core twins (``core`` fixture)."""

import base64
import copy
import gc
import hmac
import os
import tracemalloc

import orjson
import pytest

import data
from ajpcore import (
    BadSignature,
    EncodeError,
    KeyFormatError,
    KeyUsageError,
    LegacySignature,
    MalformedSignature,
    SignatureError,
    UnsupportedScheme,
    sign,
    signing_bytes,
    verify,
)
from ajpcore import signing
from conftest import run_python

SECRET = "correct horse battery staple"

BODY = {
    "ajp": "0.1",
    "job_id": "job_1",
    "from": {"type": "human", "id": "user_ada", "signature": "nested members are signed"},
    "task": {"instruction": "summarize", "input": {"weights": [5.0, -0.0, 1e-7, 1e21], "emoji": "\U0001f680"}},
    "budget": {"max_usd": 0.5},
    "signature": "sha256:" + "0" * 64,
}


def signed(body, **key):
    out = dict(body)
    out["signature"] = sign(body, **key)
    return out


def reference_hmac(core, body, secret):
    """What a sender computes: HMAC-SHA256 (hmac.digest) over the whole canonical body minus signature."""
    rest = {k: v for k, v in body.items() if k != "signature"}
    return "sha256:" + hmac.digest(secret.encode(), core.canonicalize(rest), "sha256").hex()


# -- signing bytes and HMAC signatures --------------------------------------------


def test_signing_bytes_drops_only_the_top_level_signature(core):
    rest = {k: v for k, v in BODY.items() if k != "signature"}
    assert signing_bytes(BODY) == core.canonicalize(rest)
    assert b"nested members are signed" in signing_bytes(BODY)
    assert signing_bytes(rest) == signing_bytes(BODY)


def test_sign_is_hmac_over_the_canonical_body(core):
    assert sign(BODY, secret=SECRET) == reference_hmac(core, BODY, SECRET)
    assert sign(BODY, secret=SECRET.encode()) == sign(BODY, secret=SECRET)


def test_sign_ignores_the_current_signature_value(core):
    other = dict(BODY, signature="anything at all")
    assert sign(other, secret=SECRET) == sign(BODY, secret=SECRET)


def test_sign_and_verify_never_mutate_the_body(core):
    body = copy.deepcopy(BODY)
    sign(body, secret=SECRET)
    signing_bytes(body)
    with pytest.raises(BadSignature):
        verify(body, secret=SECRET)
    assert body == BODY and list(body) == list(BODY)


def test_round_trip(core):
    verify(signed(BODY, secret=SECRET), secret=SECRET)


def test_wrong_secret_is_bad_signature(core):
    with pytest.raises(BadSignature, match="does not match"):
        verify(signed(BODY, secret=SECRET), secret=SECRET + "!")


def test_tampered_nested_value_is_bad_signature(core):
    body = signed(BODY, secret=SECRET)
    body["task"] = dict(body["task"], input=dict(body["task"]["input"], weights=[5.0, 0.0, 1e-7, 1e21 + 2**20]))
    with pytest.raises(BadSignature):
        verify(body, secret=SECRET)


def test_body_without_signature_member_signs_the_same(core):
    rest = {k: v for k, v in BODY.items() if k != "signature"}
    assert sign(rest, secret=SECRET) == sign(BODY, secret=SECRET)


# -- Ed25519 signatures -------------------------------------------------------------

L = 2**252 + 27742317777372353535851937790883648493  # order of the Ed25519 base point (RFC 8032 §5.1)


@pytest.mark.parametrize("backend", [None, "cryptography", "pynacl"])
def test_ed25519_round_trip_with_objects_and_text_forms(core, backend):
    from ajpcore import Ed25519PrivateKey

    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    signature = sign(BODY, private_key=private)
    assert signature == sign(BODY, private_key=private.to_string())
    assert signing.parse_signature(signature)[0] == "ed25519"
    body = dict(BODY, signature=signature)
    for public in (private.public_key, private.public_key.to_string("spki"), private.public_key.to_string("ed25519")):
        verify(body, public_key=public, backend=backend)
    with pytest.raises(BadSignature):
        verify(dict(body, job_id="job_2"), public_key=private.public_key, backend=backend)


@pytest.mark.parametrize("backend", [None, "cryptography"])  # None is libsodium (the default)
def test_ed25519_malleated_signature_is_refused(core, backend):
    # R || (S + L) satisfies the verification equation too; the strict policy refuses S >= L.
    from ajpcore import Ed25519PrivateKey

    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    raw = signing.parse_signature(sign(BODY, private_key=private))[1]
    s = int.from_bytes(raw[32:], "little") + L
    malleated = "ed25519:" + base64.b64encode(raw[:32] + s.to_bytes(32, "little")).decode()
    with pytest.raises(BadSignature) as info:
        verify(dict(BODY, signature=malleated), public_key=private.public_key, backend=backend)
    assert type(info.value) is BadSignature


# -- key arguments ------------------------------------------------------------------


def refusal(func, *args, **kwargs):
    with pytest.raises(Exception) as info:
        func(*args, **kwargs)
    return type(info.value), str(info.value)


@pytest.mark.parametrize(
    "call, kind",
    [
        (lambda: sign(BODY), KeyUsageError),
        (lambda: sign(BODY, secret=SECRET, private_key="k"), KeyUsageError),
        (lambda: verify(BODY), KeyUsageError),
        (lambda: verify(BODY, secret=SECRET, public_key="k"), KeyUsageError),
        (lambda: sign(BODY, secret=12345), KeyUsageError),
        (lambda: verify(signed(BODY, secret=SECRET), secret=["k"]), KeyUsageError),
        (lambda: sign(BODY, private_key=12345), KeyUsageError),
        (lambda: verify(dict(BODY, signature="ed25519:" + B64), public_key=b"raw bytes, not a key"), KeyUsageError),
        (lambda: verify(signed(BODY, secret=SECRET), secret=SECRET, backend="openssl"), KeyUsageError),
        (lambda: sign(BODY, secret=""), KeyFormatError),
        (lambda: sign(BODY, secret=b""), KeyFormatError),
        (lambda: verify(signed(BODY, secret=SECRET), secret=""), KeyFormatError),
        (lambda: sign(BODY, secret="lone \ud800 surrogate"), KeyFormatError),
        (lambda: sign(BODY, private_key="not a key"), KeyFormatError),
    ],
)
def test_key_arguments_are_checked(twins, monkeypatch, call, kind):
    import ajpcore._core as _core

    results = []
    for twin in twins:
        monkeypatch.setattr(_core, "impl", twin)
        results.append(refusal(call))
    assert results[0] == results[1]
    assert results[0][0] is kind and issubclass(kind, ValueError)


@pytest.mark.parametrize("body", [[1, 2], "text", None, 5])
def test_body_must_be_an_object(core, body):
    for call in (lambda: sign(body, secret=SECRET), lambda: verify(body, secret=SECRET), lambda: signing_bytes(body)):
        kind, message = refusal(call)
        assert kind is EncodeError and "must be a JSON object" in message


def test_unencodable_body_is_encode_error(core):
    with pytest.raises(EncodeError, match=r"budget"):
        sign(dict(BODY, budget={"max_usd": float("nan")}), secret=SECRET)


def hostile_bodies():
    deep = []
    for _ in range(1_000_000):
        deep = [deep]
    cyclic = {"a": []}
    cyclic["a"].append(cyclic)
    return {"deep": {"x": deep}, "cyclic": cyclic}


@pytest.mark.parametrize("name", ["deep", "cyclic"])
def test_hostile_bodies_are_encode_errors(twins, monkeypatch, name):
    import ajpcore._core as _core

    body = dict(hostile_bodies()[name], signature="sha256:" + "0" * 64)
    results = []
    for twin in twins:
        monkeypatch.setattr(_core, "impl", twin)
        for call in (lambda: sign(body, secret=SECRET), lambda: verify(body, secret=SECRET), lambda: signing_bytes(body)):
            results.append(refusal(call))
    assert all(kind is EncodeError and "Nesting deeper" in message for kind, message in results)
    assert results[:3] == results[3:]


# -- strict signature strings ---------------------------------------------------------

HEX = "7c153f1a9799fc04fdc894698053371be4de499b489151fb74297e5fd905bcab"
B64 = base64.b64encode(bytes(range(64))).decode()
MALFORMED = {
    "uppercase hex": "sha256:" + HEX.upper(),
    "one uppercase digit": "sha256:" + HEX[:-1] + "B",
    "63 hex digits": "sha256:" + HEX[:63],
    "65 hex digits": "sha256:" + HEX + "0",
    "non-hex digit": "sha256:" + HEX[:-1] + "g",
    "unicode digit": "sha256:" + HEX[:-1] + "\u0663",
    "leading space": " sha256:" + HEX,
    "space after colon": "sha256: " + HEX,
    "trailing newline": "sha256:" + HEX + "\n",
    "trailing space": "sha256:" + HEX + " ",
    "empty sha256": "sha256:",
    "0x prefix": "sha256:0x" + HEX[2:],
    "base64 in sha256": "sha256:" + B64,
    "no scheme": HEX,
    "empty": "",
    "uppercase scheme": "SHA256:" + HEX,
    "base64 87 chars": "ed25519:" + B64[:-1],
    "base64 89 chars": "ed25519:" + B64 + "=",
    "missing padding": "ed25519:" + B64.rstrip("="),
    "nonzero pad bits": "ed25519:" + B64[:85] + "B==",
    "url-safe alphabet (-)": "ed25519:" + base64.urlsafe_b64encode(bytes([0xFB, 0xEF, 0xBE] * 21 + [0])).decode(),
    "url-safe alphabet (_)": "ed25519:" + base64.urlsafe_b64encode(bytes([0xFF] * 63 + [0])).decode(),
    "url-safe, unpadded": "ed25519:" + base64.urlsafe_b64encode(bytes(range(64))).decode().rstrip("="),
    "whitespace inside": "ed25519:" + B64[:40] + " " + B64[41:],
    "newline inside": "ed25519:" + B64[:40] + "\n" + B64[40:],
    "trailing newline b64": "ed25519:" + B64 + "\n",
    "hex in ed25519": "ed25519:" + "00" * 64,
    "three pad chars": "ed25519:" + B64[:85] + "===",
    "63 bytes": "ed25519:" + base64.b64encode(bytes(63)).decode(),
    "65 bytes, also 88 chars": "ed25519:" + base64.b64encode(bytes(65)).decode(),
}


def test_malformed_table_is_really_malformed():
    # Guard the table itself: the valid spellings parse, and every entry is distinct.
    assert signing.parse_signature("sha256:" + HEX)[1] == bytes.fromhex(HEX)
    assert signing.parse_signature("ed25519:" + B64)[1] == bytes(range(64))
    for raw in (bytes([0xFB, 0xEF, 0xBE] * 21 + [0]), bytes([0xFF] * 63 + [0])):
        assert signing.parse_signature("ed25519:" + base64.b64encode(raw).decode())[1] == raw
    assert "-" in MALFORMED["url-safe alphabet (-)"] and "_" in MALFORMED["url-safe alphabet (_)"]
    assert len(set(MALFORMED.values())) == len(MALFORMED)


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_signatures(core, name):
    body = dict(BODY, signature=MALFORMED[name])
    with pytest.raises(MalformedSignature):
        verify(body, secret=SECRET)
    with pytest.raises(MalformedSignature):
        verify(body, public_key="not parsed: the signature string is checked first")


@pytest.mark.parametrize("value", [None, 123, ["sha256:" + HEX], {"sha256": HEX}, b"sha256:" + HEX.encode()])
def test_signature_of_another_type(core, value):
    with pytest.raises(MalformedSignature, match="must be a string"):
        verify(dict(BODY, signature=value), secret=SECRET)


def test_missing_signature(core):
    rest = {k: v for k, v in BODY.items() if k != "signature"}
    with pytest.raises(MalformedSignature, match="no `signature`"):
        verify(rest, secret=SECRET)


def test_every_canonical_last_digit_parses():
    for raw in (bytes(63) + bytes([v]) for v in range(256)):
        text = base64.b64encode(raw).decode()
        assert signing.parse_signature("ed25519:" + text) == ("ed25519", raw)


def test_scheme_that_does_not_fit_the_key(core):
    with pytest.raises(UnsupportedScheme, match="needs a public key"):
        verify(dict(BODY, signature="ed25519:" + B64), secret=SECRET)
    with pytest.raises(UnsupportedScheme, match="needs a shared secret"):
        verify(dict(BODY, signature="sha256:" + HEX), public_key="not parsed: the scheme is checked first")


@pytest.mark.parametrize("text", ["rsa:AAAA", "hmac-sha512:" + HEX, "sha384:" + HEX])
def test_unknown_scheme(core, text):
    with pytest.raises(UnsupportedScheme, match="Unknown signature scheme"):
        verify(dict(BODY, signature=text), secret=SECRET)


def test_error_kinds_are_signature_errors():
    for kind in (BadSignature, MalformedSignature, UnsupportedScheme, LegacySignature):
        assert issubclass(kind, SignatureError) and kind.status == 401


# -- the pre-0.3 (legacy) form ----------------------------------------------------------

# JSON.stringify(rest, ["a", "b", "c"]) worked out by hand from ECMA-262 SerializeJSONObject:
# every object, at any depth, keeps only the members "a", "b", "c" in that order; arrays keep
# every element.
LEGACY_BODY = {
    "c": [{"b": 1, "x": 2, "a": [3, {"c": None, "y": 4}]}, "s", 1.5],
    "b": {"z": {"a": 1}, "c": {"c": {"c": True, "d": False}}, "é": 0},
    "a": "x",
}
LEGACY_TEXT = '{"a":"x","b":{"c":{"c":{"c":true}}},"c":[{"a":[3,{"c":null}],"b":1},"s",1.5]}'


def test_legacy_form_matches_hand_derived_json_stringify(core):
    assert core.canonicalize(signing._legacy_form(LEGACY_BODY)) == LEGACY_TEXT.encode()


def test_legacy_hmac_signature_is_recognised_and_refused(core):
    legacy = "sha256:" + hmac.digest(SECRET.encode(), LEGACY_TEXT.encode(), "sha256").hex()
    with pytest.raises(LegacySignature, match="upgrade your sender"):
        verify(dict(LEGACY_BODY, signature=legacy), secret=SECRET)
    with pytest.raises(BadSignature):  # the legacy form under another secret is just bad
        verify(dict(LEGACY_BODY, signature=legacy), secret=SECRET + "!")


def test_legacy_form_equal_to_canonical_form_is_simply_valid(core):
    # A flat body serializes the same both ways: its signature is a valid 0.3 signature.
    flat = {"b": [1, 2, {"b": 3}], "a": "x"}
    assert core.canonicalize(signing._legacy_form(flat)) == core.canonicalize(flat)
    verify(signed(flat, secret=SECRET), secret=SECRET)


def test_legacy_form_is_iterative(core):
    deep = {"a": None}
    node = deep
    for _ in range(core.MAX_DEPTH - 2):
        node["a"] = {"a": None}
        node = node["a"]
    assert core.canonicalize(signing._legacy_form(deep)) == core.canonicalize(deep)
    too_deep = [deep]
    for _ in range(5):
        too_deep = {"a": too_deep}
    with pytest.raises(EncodeError, match="Nesting deeper"):
        signing._legacy_form(too_deep)


# `__proto__` in the allow-list: JSON.parse and `{signature, ...rest}` make it an own member of
# `rest`, so it is in K; [[Get]] on a nested object without an own `__proto__` reaches the
# Object.prototype accessor, which yields Object.prototype, serialized with K: there every key is
# a function (omitted) except `__proto__`, which yields null.  Worked out from ECMA-262
# SerializeJSONObject and OrdinaryGet, and checked against node below.
PROTO_BODY = {
    "__proto__": {"a": 1, "__proto__": [{"b": 2}]},
    "b": {"c": 2, "constructor": 1, "b": {}},
    "constructor": [{}, 3],
}
PROTO_TEXT = (
    '{"__proto__":{"__proto__":[{"__proto__":{"__proto__":null},"b":2}]},'
    '"b":{"__proto__":{"__proto__":null},"b":{"__proto__":{"__proto__":null}},"constructor":1},'
    '"constructor":[{"__proto__":{"__proto__":null}},3]}'
)


def test_legacy_form_with_top_level_proto_member(core):
    assert core.canonicalize(signing._legacy_form(PROTO_BODY)) == PROTO_TEXT.encode()


def test_legacy_signature_over_top_level_proto_member_is_labelled_legacy(core):
    tag = "sha256:" + hmac.digest(SECRET.encode(), PROTO_TEXT.encode(), "sha256").hex()
    with pytest.raises(LegacySignature):
        verify(dict(PROTO_BODY, signature=tag), secret=SECRET)
    from ajpcore.keys import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_seed(bytes(range(32)))
    ed = "ed25519:" + base64.b64encode(key.sign(PROTO_TEXT.encode())).decode()
    with pytest.raises(LegacySignature):
        verify(dict(PROTO_BODY, signature=ed), public_key=key.public_key)
    # A nested `__proto__` alone is an ordinary member: K does not contain it.
    nested = {"a": {"__proto__": 1, "a": 2}}
    assert core.canonicalize(signing._legacy_form(nested)) == b'{"a":{"a":2}}'


def test_legacy_form_too_deep_only_through_proto_is_bad_signature(core):
    # The added `{"__proto__":null}` level pushes the legacy form past the depth limit
    # while the body itself canonicalizes: refused as BadSignature, never EncodeError.
    deep: dict = {}
    node = deep
    for _ in range(core.MAX_DEPTH - 1):  # MAX_DEPTH objects: the deepest canonical JSON allows
        node["__proto__"] = {}
        node = node["__proto__"]
    core.canonicalize(deep)
    with pytest.raises(EncodeError, match="Nesting deeper"):
        signing._legacy_form(deep)
    with pytest.raises(BadSignature):
        verify(dict(deep, signature="sha256:" + "0" * 64), secret=SECRET)


NODE_LEGACY = r"""
const bodies = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = bodies.map((text) => {
  const { signature, ...rest } = JSON.parse(text);
  return JSON.stringify(rest, Object.keys(rest).sort());
});
process.stdout.write(JSON.stringify(out));
"""

NODE_BODIES = [
    PROTO_BODY,
    LEGACY_BODY,
    {"__proto__": None, "x": {}, "signature": "s"},
    {"__proto__": "p", "10": {"9": 1, "10": {"10": 2}}, "9": [{"9": {}}]},
    {"__proto__": {"__proto__": {"__proto__": {}}}, "toString": {"toString": {}, "valueOf": 1}},
    {"\U0001f680": {"\uff61": 1, "\U0001f680": {"__proto__": 5}}, "\uff61": [1e21, 5.0, 1e-7, -0.0, 0.1]},
    {"__proto__": [[{}], {"hasOwnProperty": {"__proto__": {}}}], "hasOwnProperty": "h", "length": {"length": 3}},
]


@pytest.mark.parametrize("index", range(len(NODE_BODIES)))
def test_legacy_form_agrees_with_node(core, index):
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript cross-check of the legacy form needs it")
    body = NODE_BODIES[index]
    text = orjson.dumps(body).decode()  # orjson keeps `__proto__` as an ordinary member name
    run = subprocess.run([node, "-e", NODE_LEGACY], input=orjson.dumps([text]), capture_output=True, check=True)
    expected = orjson.loads(run.stdout)[0].encode()
    rest = {k: v for k, v in core.decode(text).items() if k != "signature"}
    assert core.canonicalize(signing._legacy_form(rest)) == expected


# -- memory: the MAC rides along the stream -------------------------------------------


def peak_allocation(func, bound=None):
    """The peak of memory traced while ``func`` runs (the lowest of up to three runs over ``bound``).

    tracemalloc traces every thread: a thread an earlier test left behind in this worker (a
    store's worker thread, a client's) can allocate during the run, which a sequential run never
    showed but a pytest-xdist worker did once (the pure twin: 185 kB in a full run, 55 kB alone).
    A run over ``bound`` is tried again, after a collection: a function that holds more than
    ``bound`` does so every time.
    """
    peak = None
    for _ in range(3 if bound is not None else 1):
        gc.collect()
        tracemalloc.start()
        try:
            func()
            run = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        peak = run if peak is None else min(peak, run)
        if bound is None or peak <= bound:
            break
    return peak


def test_hmac_signing_memory_is_bounded(core):
    body = data.value("mixed8m")
    sign({"warm": "the key cache"}, secret=data.SECRET)
    bound = signing.SIGN_CHUNK_SIZE + 64 * 1024
    peak = peak_allocation(lambda: sign(body, secret=data.SECRET), bound)
    assert peak <= bound
    # Verifying streams the same way (only the top level is copied, without its signature);
    # shown on an ~850 KB slice to keep the pure twin's traced run short.
    slice_body = {"records": body["records"][:2000], "signature": None}
    slice_body["signature"] = sign(slice_body, secret=data.SECRET)
    assert len(orjson.dumps(slice_body)) > 800_000
    assert peak_allocation(lambda: verify(slice_body, secret=data.SECRET), bound) <= bound
    # The pipeline users write today holds the whole serialized document at once.
    size = len(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))
    orjson_peak = peak_allocation(
        lambda: hmac.digest(data.SECRET, orjson.dumps(body, option=orjson.OPT_SORT_KEYS), "sha256")
    )
    assert size > 7_000_000 and orjson_peak >= size > 50 * peak


# -- command line -----------------------------------------------------------------------


def cli(*args, stdin=b"", env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    return run_python("-m", "ajpcore", *args, stdin=stdin, env=env)


def test_cli_sign_then_verify(tmp_path):
    doc = orjson.dumps(BODY)
    out = cli("sign", "--secret-env", "AJP_TEST_SECRET", stdin=doc, env_extra={"AJP_TEST_SECRET": SECRET})
    assert out.returncode == 0, out.stderr
    printed = orjson.loads(out.stdout)
    assert printed["signature"] == sign(BODY, secret=SECRET)
    assert out.stdout == signing._core.impl.canonicalize(printed)
    path = tmp_path / "signed.json"
    path.write_bytes(out.stdout)
    ok = cli("verify", str(path), "--secret-env", "AJP_TEST_SECRET", env_extra={"AJP_TEST_SECRET": SECRET})
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(b"valid")


def test_cli_verify_invalid_exits_1():
    body = signed(BODY, secret=SECRET)
    out = cli("verify", "--secret-env", "S", stdin=orjson.dumps(body), env_extra={"S": SECRET + "x"})
    assert out.returncode == 1
    assert b"BadSignature" in out.stderr and out.stdout == b""
    legacy = dict(LEGACY_BODY, signature="sha256:" + hmac.digest(SECRET.encode(), LEGACY_TEXT.encode(), "sha256").hex())
    out = cli("verify", "--secret-env", "S", stdin=orjson.dumps(legacy), env_extra={"S": SECRET})
    assert out.returncode == 1 and b"upgrade your sender" in out.stderr


@pytest.mark.parametrize(
    "args, stdin, env",
    [
        (("verify", "--secret-env", "UNSET_AJP_VAR"), orjson.dumps(BODY), {}),
        (("verify", "--secret-env", "EMPTY"), orjson.dumps(BODY), {"EMPTY": ""}),
        (("sign", "--secret-env", "EMPTY"), orjson.dumps(BODY), {"EMPTY": ""}),
        (("verify", "--secret-env", "S"), b'{"a": 1, "a": 2}', {"S": "k"}),
        (("verify", "--secret-env", "S"), b"[1, 2]", {"S": "k"}),
        (("sign", "--secret-env", "S"), b"{", {"S": "k"}),
        (("verify",), orjson.dumps(BODY), {}),
        (("verify", "--secret-env", "S", "--public-key", "x"), orjson.dumps(BODY), {"S": "k"}),
        (("sign", "--secret", "k"), orjson.dumps(BODY), {}),
    ],
)
def test_cli_malformed_input_exits_2(args, stdin, env):
    env = dict(env)
    out = cli(*args, stdin=stdin, env_extra=env)
    assert out.returncode == 2, out.stderr
    assert out.stdout == b""


def test_cli_demo_signs_verifies_and_refuses_tampering():
    out = cli("demo")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    document = orjson.loads(lines[1])
    assert document["signature"].startswith("sha256:")
    assert lines[2] == "verify: valid"
    assert "refused - BadSignature" in lines[3]


def test_cli_ed25519_sign_then_verify(tmp_path):
    from ajpcore import Ed25519PrivateKey

    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    key_file = tmp_path / "agent.key"
    key_file.write_text(private.to_string() + "\n")
    out = cli("sign", "--key", str(key_file), stdin=orjson.dumps(BODY))
    assert out.returncode == 0, out.stderr
    document = orjson.loads(out.stdout)
    assert document["signature"] == sign(BODY, private_key=private)
    public = private.public_key
    for form in (public.to_string("spki"), public.to_string("ed25519")):
        ok = cli("verify", "--public-key", form, stdin=out.stdout)
        assert ok.returncode == 0, ok.stderr
    other = Ed25519PrivateKey.from_seed(bytes(32)).public_key.to_string()
    bad = cli("verify", "--public-key", other, stdin=out.stdout)
    assert bad.returncode == 1 and b"BadSignature" in bad.stderr
    wrong_scheme = cli("verify", "--secret-env", "S", stdin=out.stdout, env_extra={"S": SECRET})
    assert wrong_scheme.returncode == 1 and b"UnsupportedScheme" in wrong_scheme.stderr
    bad_key = cli("verify", "--public-key", "ed25519:not-a-key", stdin=out.stdout)
    assert bad_key.returncode == 2
