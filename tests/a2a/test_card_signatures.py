"""ajpcore.a2a: Agent Card signatures on both core twins (the `core` fixture switches the
canonicalizer and decoder the package uses): every algorithm, the three profiles, what a
verified card lets one read, key sets, and every refusal with its typed error."""

import base64
import copy
import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import given, settings, strategies as st

import ajpcore
from ajpcore import a2a
from ajpcore.keys import Ed25519PrivateKey

SPEC_EXAMPLE = {"name": "Example Agent", "description": "",
                "capabilities": {"streaming": False, "pushNotifications": False, "extensions": []}, "skills": []}
SPEC_EXAMPLE_TEXT = b'{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}'

CARD = {
    "name": "Agent \u00e9t\u00e9 \U0001f326", "description": "Forecasts", "version": "1.0.0",
    "supportedInterfaces": [{"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
    "capabilities": {"streaming": True, "extensions": [{"uri": "https://ext.example", "params": {"\ufb01": 1, "\U0001f600": 1e21}}]},
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "f", "name": "F", "description": "d", "tags": ["w"]}],
}

ED = Ed25519PrivateKey.from_seed(bytes(range(32)))
EC = ec.derive_private_key(12345678901234567890, ec.SECP256R1())
RSA = rsa.generate_private_key(65537, 2048)
KEYS = {"ed": ("EdDSA", ED), "ec": ("ES256", EC), "rs": ("RS256", RSA), "ps": ("PS256", RSA)}
JWKS = {"keys": [a2a.jwk_from_key(ED, kid="ed"), a2a.jwk_from_key(EC, kid="ec"), a2a.jwk_from_key(RSA, kid="rs"),
                 a2a.jwk_from_key(RSA, kid="ps")]}


def signed(card=CARD, kid="ed", **kw):
    alg, key = KEYS[kid]
    return a2a.sign_card(card, key, kid=kid, alg=alg, **kw)


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def header_entry(card, header, key=ED, alg="EdDSA", profile="served"):
    protected = b64u(json.dumps(header, separators=(",", ":")).encode())
    data = (protected + "." + b64u(a2a.payload(card, profile))).encode()
    return {"protected": protected, "signature": b64u(a2a._jws.signature_bytes(alg, key, data))}


# -- profiles --------------------------------------------------------------------------------


def test_spec_profile_reproduces_the_worked_example(core):
    assert a2a.payload(SPEC_EXAMPLE, "spec") == SPEC_EXAMPLE_TEXT


def test_profiles_differ_on_the_worked_example(core):
    assert a2a.payload(SPEC_EXAMPLE, "served") == ajpcore.canonicalize(SPEC_EXAMPLE)
    assert a2a.payload(SPEC_EXAMPLE, "sdk") == b'{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}'


def test_payload_never_covers_signatures(core):
    card = signed()
    for profile in a2a.PROFILES:
        assert a2a.payload(card, profile) == a2a.payload(CARD, profile)


def test_payload_goes_through_the_canonicalizer(core):
    # UTF-16 order puts U+1F600 (D83D DE00) before U+FB01; code point order would not.
    text = a2a.payload(CARD, "served").decode()
    assert text.index('"\U0001f600":1e+21') < text.index('"\ufb01":1')


def test_unknown_profile_and_non_object(core):
    with pytest.raises(ajpcore.KeyUsageError, match="unknown canonicalization profile"):
        a2a.payload(CARD, "jcs")
    with pytest.raises(ajpcore.KeyUsageError):
        a2a.payload([CARD], "served")


def test_sdk_profile_deep_struct_is_an_encode_error(core):
    deep = {}
    inner = deep
    for _ in range(2000):
        inner["a"] = {"b": 1}
        inner = inner["a"]
    card = dict(CARD, capabilities={"extensions": [{"uri": "u", "params": deep}]})
    with pytest.raises(ajpcore.EncodeError):
        a2a.payload(card, "sdk")


# -- sign and verify ---------------------------------------------------------------------------


@pytest.mark.parametrize("kid", sorted(KEYS))
def test_every_algorithm_round_trips(core, kid):
    card = signed(kid=kid)
    for form in (card, ajpcore.canonicalize(card), ajpcore.canonicalize(card).decode()):
        result = a2a.verify_card(form, JWKS)
        assert (result.kid, result.alg, result.profile, result.unsigned_members, result.jku) == (kid, KEYS[kid][0], "served", (), None)
        assert result.payload == a2a.payload(CARD, "served")
        assert result.to_dict() == {k: v for k, v in CARD.items()}


def test_protected_header_is_canonical_json_with_typ_jose(core):
    entry = signed(jku="https://agent.example/jwks.json")["signatures"][0]
    assert set(entry) == {"protected", "signature"}
    raw = a2a._jws.b64url_decode(entry["protected"], "protected")
    assert raw == b'{"alg":"EdDSA","jku":"https://agent.example/jwks.json","kid":"ed","typ":"JOSE"}'


def test_sign_card_does_not_touch_its_input_and_appends(core):
    before = copy.deepcopy(CARD)
    once = signed()
    twice = signed(once, kid="ec")
    assert CARD == before and "signatures" not in CARD
    assert len(twice["signatures"]) == 2 and twice["signatures"][0] == once["signatures"][0]
    assert a2a.verify_card(twice, JWKS).kid == "ed"


def test_eddsa_signature_is_deterministic_and_es256_low_s(core):
    assert signed()["signatures"] == signed()["signatures"]
    for _ in range(8):
        raw = a2a._jws.b64url_decode(signed(kid="ec")["signatures"][0]["signature"], "s")
        assert int.from_bytes(raw[32:], "big") <= a2a._jws._P256_ORDER // 2


def test_es256_high_s_is_accepted(core):
    card = signed(kid="ec")
    raw = a2a._jws.b64url_decode(card["signatures"][0]["signature"], "s")
    high = raw[:32] + (a2a._jws._P256_ORDER - int.from_bytes(raw[32:], "big")).to_bytes(32, "big")
    card["signatures"][0]["signature"] = b64u(high)
    assert a2a.verify_card(card, JWKS).alg == "ES256"


def test_each_profile_is_found_and_named(core):
    messy = dict(CARD, description="", iconUrl="", securitySchemes={}, **{"x-extra": 1})
    for profile in a2a.PROFILES:
        result = a2a.verify_card(signed(messy, profile=profile), JWKS)
        assert result.profile == profile
        assert result.unsigned_members == a2a._profiles.project(messy, profile)[1]
    assert a2a._profiles.project(messy, "spec")[1] == ("/securitySchemes",)
    assert set(a2a.verify_card(signed(messy, profile="sdk"), JWKS).unsigned_members) == {"/description", "/iconUrl", "/securitySchemes", "/x-extra"}
    with pytest.raises(ajpcore.BadSignature):
        a2a.verify_card(signed(messy, profile="sdk"), JWKS, profile="served")


def test_an_uncovered_member_cannot_be_read_as_signed(core):
    card = signed()
    card["x-added"] = {"evil": True}
    result = a2a.verify_card(card, JWKS)
    assert result.profile == "sdk" and result.unsigned_members == ("/x-added",)
    assert "x-added" not in result and result.get("x-added") is None and "x-added" not in result.to_dict()
    with pytest.raises(KeyError):
        result["x-added"]
    assert result.to_dict(include_unsigned=True)["x-added"] == {"evil": True}
    assert result["name"] == CARD["name"]
    result.to_dict()["name"] = "changed"  # fresh copies
    assert result["name"] == CARD["name"]
    with pytest.raises(AttributeError):
        result.profile = "served"


def test_rotation_reports_every_signature(core):
    card = signed(signed(kid="ec"), kid="ed")
    card["signatures"].insert(0, header_entry(CARD, {"alg": "EdDSA", "kid": "old", "typ": "JOSE"}))
    result = a2a.verify_card(card, JWKS)
    assert result.kid == "ec"
    reports = result.signatures
    assert [(r.index, r.kid, r.valid, r.error) for r in reports] == [
        (0, "old", False, "UntrustedKey"), (1, "ec", True, None), (2, "ed", True, None)]
    assert reports[1].profile == "served" and reports[0].code == "UNTRUSTED_KEY"


def test_no_valid_signature_raises_the_most_telling_with_reports(core):
    card = signed(signed(kid="ec"), kid="ed")
    card["signatures"].insert(0, header_entry(CARD, {"alg": "EdDSA", "kid": "old", "typ": "JOSE"}))
    card["version"] = "9"
    with pytest.raises(ajpcore.BadSignature) as info:
        a2a.verify_card(card, JWKS)
    assert [r.error for r in info.value.reports] == ["UntrustedKey", "BadSignature", "BadSignature"]
    assert "[0] kid `old`" in str(info.value) and info.value.status == 401


@pytest.mark.parametrize("alg", ["none", "HS256", "HS512", "RS512", "ES384", "Ed448"])
def test_refused_algorithms(core, alg):
    card = dict(CARD, signatures=[{"protected": b64u(json.dumps({"alg": alg, "kid": "ed"}).encode()), "signature": ""}])
    with pytest.raises(ajpcore.UnsupportedAlgorithm) as info:
        a2a.verify_card(card, JWKS)
    assert info.value.code == "UNSUPPORTED_ALGORITHM"


def test_hmac_keyed_with_the_public_key_is_never_computed(core):
    import hashlib
    import hmac as hmac_mod

    protected = b64u(b'{"alg":"HS256","kid":"ed","typ":"JOSE"}')
    secret = json.dumps(JWKS["keys"][0]).encode()
    mac = hmac_mod.new(secret, (protected + "." + b64u(a2a.payload(CARD, "served"))).encode(), hashlib.sha256).digest()
    with pytest.raises(ajpcore.UnsupportedAlgorithm, match="HMAC"):
        a2a.verify_card(dict(CARD, signatures=[{"protected": protected, "signature": b64u(mac)}]), JWKS)


def test_alg_must_fit_the_key(core):
    for kid, alg, key in (("ec", "EdDSA", ED), ("ed", "ES256", EC), ("ed", "RS256", RSA)):
        card = dict(CARD, signatures=[header_entry(CARD, {"alg": alg, "kid": kid, "typ": "JOSE"}, key=key, alg=alg)])
        with pytest.raises(ajpcore.UnsupportedAlgorithm, match="needs"):
            a2a.verify_card(card, JWKS)
    with pytest.raises(ajpcore.UnsupportedAlgorithm):
        a2a.sign_card(CARD, ED, kid="x", alg="ES256")
    with pytest.raises(ajpcore.UnsupportedAlgorithm):
        a2a.sign_card(CARD, ED, kid="x", alg="HS256")


def test_jwk_alg_pins_the_algorithm(core):
    jwks = {"keys": [a2a.jwk_from_key(RSA, kid="rs", alg="RS256")]}
    with pytest.raises(ajpcore.UnsupportedAlgorithm, match="for `RS256` only"):
        a2a.verify_card(a2a.sign_card(CARD, RSA, kid="rs", alg="PS256"), jwks)


def test_algorithms_allow_list(core):
    with pytest.raises(ajpcore.UnsupportedAlgorithm, match="not among"):
        a2a.verify_card(signed(kid="ec"), JWKS, algorithms=["EdDSA"])
    assert a2a.verify_card(signed(kid="ec"), JWKS, algorithms=("ES256",)).alg == "ES256"
    for bad in (["HS256"], "EdDSA", ["none"]):
        with pytest.raises(ajpcore.KeyUsageError):
            a2a.verify_card(signed(), JWKS, algorithms=bad)


def test_jku_is_never_a_key_source_and_the_allow_list_is_enforced(core):
    card = signed(jku="https://evil.example/jwks.json")
    assert a2a.verify_card(card, JWKS).jku == "https://evil.example/jwks.json"
    with pytest.raises(ajpcore.UntrustedKey, match="allowed list"):
        a2a.verify_card(card, JWKS, allowed_jku={"https://agent.example/jwks.json"})
    assert a2a.verify_card(card, JWKS, allowed_jku=["https://evil.example/jwks.json"]).kid == "ed"
    with pytest.raises(ajpcore.KeyUsageError):
        a2a.verify_card(card, JWKS, allowed_jku="https://evil.example/jwks.json")


@pytest.mark.parametrize("header, match", [
    ({"alg": "EdDSA", "kid": "ed", "crit": ["exp"], "exp": 1}, "crit"),
    ({"alg": "EdDSA", "kid": "ed", "crit": ["b64"], "b64": False}, "b64"),
    ({"alg": "EdDSA", "kid": "ed", "b64": False}, "b64"),
    ({"alg": "EdDSA", "kid": "ed", "crit": []}, "crit"),
    ({"alg": "EdDSA", "kid": "ed", "typ": "JWT"}, "typ"),
    ({"alg": "EdDSA"}, "kid"),
    ({"alg": "EdDSA", "kid": ""}, "kid"),
    ({"alg": "EdDSA", "kid": "ed", "jku": 5}, "jku"),
    ({"kid": "ed"}, "alg"),
])
def test_malformed_protected_headers(core, header, match):
    card = dict(CARD, signatures=[header_entry(CARD, header)])
    with pytest.raises(ajpcore.MalformedJws, match=match):
        a2a.verify_card(card, JWKS)


@pytest.mark.parametrize("raw", [
    b'{"alg":"EdDSA","kid":"ed","alg":"EdDSA"}', b'{"alg":"EdDSA","kid":"ed",}', b'["alg"]',
    b'{"alg":"EdDSA","kid":"ed","x":"\\udc00"}', b'\xef\xbb\xbf{"alg":"EdDSA","kid":"ed"}', b'{"alg":"EdDSA","kid":"ed"} x',
])
def test_protected_header_must_be_strict_ijson(core, raw):
    protected = b64u(raw)
    data = (protected + "." + b64u(a2a.payload(CARD, "served"))).encode()
    card = dict(CARD, signatures=[{"protected": protected, "signature": b64u(ED.sign(data))}])
    with pytest.raises(ajpcore.MalformedJws):
        a2a.verify_card(card, JWKS)


def test_non_canonical_base64url_is_refused(core):
    good = signed()["signatures"][0]
    sig = good["signature"]
    assert sig[-1] in "AQgw"  # 64 bytes end in one byte: 2 characters, the last with 4 zero pad bits
    for bad in (dict(good, signature=sig + "="), dict(good, signature=sig[:-1] + chr(ord(sig[-1]) + 1)),
                dict(good, signature=sig.replace("-", "+").replace("_", "/") + "+"), dict(good, signature=" " + sig),
                dict(good, protected=good["protected"] + "="), dict(good, signature=sig[:-1])):
        with pytest.raises(ajpcore.MalformedJws):
            a2a.verify_card(dict(CARD, signatures=[bad]), JWKS)
    with pytest.raises(ajpcore.BadSignature, match="64 bytes"):  # canonical, but 63 bytes
        a2a.verify_card(dict(CARD, signatures=[dict(good, signature=sig[:-2])]), JWKS)


def test_unprotected_header_rules(core):
    entry = signed()["signatures"][0]
    assert a2a.verify_card(dict(CARD, signatures=[dict(entry, header={"note": 1})]), JWKS).kid == "ed"
    for header in ({"kid": "ec"}, {"crit": ["x"]}, ["x"]):
        with pytest.raises(ajpcore.MalformedJws):
            a2a.verify_card(dict(CARD, signatures=[dict(entry, header=header)]), JWKS)


def test_card_shape_refusals(core):
    with pytest.raises(ajpcore.UnsignedCard):
        a2a.verify_card(CARD, JWKS)
    with pytest.raises(ajpcore.UnsignedCard):
        a2a.verify_card(dict(CARD, signatures=[]), JWKS)
    with pytest.raises(ajpcore.MalformedCard):
        a2a.verify_card(dict(CARD, signatures={}), JWKS)
    with pytest.raises(ajpcore.MalformedCard):
        a2a.verify_card(b"[1]", JWKS)
    with pytest.raises(ajpcore.MalformedJws):
        a2a.verify_card(dict(CARD, signatures=["x"]), JWKS)
    with pytest.raises(ajpcore.DecodeError):
        a2a.verify_card(b'{"name":"a","name":"b"}', JWKS)
    for exc in (ajpcore.UnsignedCard, ajpcore.MalformedCard, ajpcore.MalformedJws, ajpcore.UnsupportedAlgorithm, ajpcore.UntrustedKey):
        assert issubclass(exc, ajpcore.SignatureError)


def test_tampering_anywhere_is_a_bad_signature(core):
    card = signed()
    card["capabilities"]["extensions"][0]["params"]["\ufb01"] = 2
    with pytest.raises(ajpcore.BadSignature):
        a2a.verify_card(card, JWKS)


def test_ed25519_strict_policy_applies(core):
    card = signed()
    raw = a2a._jws.b64url_decode(card["signatures"][0]["signature"], "s")
    L = 2**252 + 27742317777372353535851937790883648493
    card["signatures"][0]["signature"] = b64u(raw[:32] + (int.from_bytes(raw[32:], "little") + L).to_bytes(32, "little"))
    with pytest.raises(ajpcore.BadSignature):
        a2a.verify_card(card, JWKS)


def test_weak_rsa_keys_are_refused():
    small = rsa.generate_private_key(65537, 1024)
    with pytest.raises(ajpcore.UnsupportedAlgorithm, match="1024 bits"):
        a2a.sign_card(CARD, small, kid="s", alg="RS256")
    with pytest.raises(ajpcore.JwkError):
        a2a.jwk_from_key(small, kid="s")


def test_sign_card_usage_errors(core):
    for kw in ({"kid": ""}, {"kid": "ed", "jku": 5}, {"kid": "ed", "profile": "x"}):
        with pytest.raises(ajpcore.KeyUsageError):
            a2a.sign_card(CARD, ED, alg="EdDSA", **{"kid": "ed", **kw})
    with pytest.raises(ajpcore.MalformedCard):
        a2a.sign_card(dict(CARD, signatures="x"), ED, kid="ed", alg="EdDSA")


# -- key sets --------------------------------------------------------------------------------


def test_keyset_from_every_form(core):
    text = json.dumps(JWKS)
    for form in (JWKS, text, text.encode()):
        keys = a2a.KeySet.from_jwks(form)
        assert keys.kids == ("ed", "ec", "rs", "ps") and len(keys) == 4 and "ed" in keys
        assert keys["ec"].kty == "EC" and keys.get("zz") is None
    with pytest.raises(AttributeError):
        keys.x = 1
    with pytest.raises(ajpcore.JwkError):
        a2a.KeySet()


@pytest.mark.parametrize("change, match", [
    ({"d": "AAAA"}, "private"), ({"kty": "oct"}, "symmetric"), ({"kty": "RSA2"}, "kty"), ({"crv": "X25519"}, "crv"),
    ({"kid": ""}, "kid"), ({"use": "enc"}, "use"), ({"key_ops": ["sign"]}, "key_ops"), ({"alg": "ES256"}, "alg"),
    ({"x": "AAAA"}, "32 bytes"), ({"x": None}, "base64url"),
])
def test_keyset_refusals(core, change, match):
    jwk = dict(JWKS["keys"][0], **change)
    with pytest.raises(ajpcore.JwkError, match=match):
        a2a.KeySet.from_jwks({"keys": [jwk]})


def test_keyset_duplicates_and_documents(core):
    with pytest.raises(ajpcore.JwkError, match="twice"):
        a2a.KeySet.from_jwks({"keys": [JWKS["keys"][0], JWKS["keys"][0]]})
    with pytest.raises(ajpcore.JwkError, match="strict JSON"):
        a2a.KeySet.from_jwks('{"keys":[],"keys":[]}')
    for doc in ([], {"keys": {}}, "null"):
        with pytest.raises(ajpcore.JwkError):
            a2a.KeySet.from_jwks(doc)
    with pytest.raises(ajpcore.WeakKey):
        a2a.KeySet.from_jwks({"keys": [dict(JWKS["keys"][0], x=b64u(bytes([1]) + bytes(31)))]})
    ec_jwk = dict(JWKS["keys"][1])
    ec_jwk["y"] = b64u(bytes(32))
    with pytest.raises(ajpcore.JwkError, match="not a point"):
        a2a.KeySet.from_jwks({"keys": [ec_jwk]})
    rsa_jwk = dict(JWKS["keys"][2], e=b64u(b"\0\1\0\1"))
    with pytest.raises(ajpcore.JwkError, match="minimum number of octets"):
        a2a.KeySet.from_jwks({"keys": [rsa_jwk]})


def test_jwk_from_key_round_trips():
    for key in (ED, ED.public_key, EC, EC.public_key(), RSA, RSA.public_key()):
        jwk = a2a.jwk_from_key(key, kid="k")
        assert "d" not in jwk and jwk["use"] == "sig"
        assert a2a.KeySet.from_jwks({"keys": [jwk]})["k"].kid == "k"
    with pytest.raises(ajpcore.JwkError):
        a2a.jwk_from_key(ec.generate_private_key(ec.SECP384R1()), kid="k")
    with pytest.raises(ajpcore.JwkError):
        a2a.jwk_from_key(ED, kid="k", alg="RS256")


# -- properties ------------------------------------------------------------------------------

params = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53 + 1, 2**53 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=12)


@settings(max_examples=60)
@given(params, st.sampled_from(a2a.PROFILES))
def test_any_params_sign_and_verify_under_their_profile(value, profile):
    card = dict(CARD, capabilities={"extensions": [{"uri": "u", "params": {"p": value}}]})
    result = a2a.verify_card(ajpcore.canonicalize(signed(card, profile=profile)), JWKS, profile=profile)
    assert result.payload == a2a.payload(card, profile)
    assert ajpcore.canonicalize(result.to_dict()) == result.payload


def test_twins_agree_on_every_pack_payload(twins):
    from pathlib import Path

    cases = json.loads((Path(__file__).resolve().parents[2] / "conformance" / "a2a.json").read_bytes())["cases"]
    native, pure = twins
    for case in (c for c in cases if "payloads" in c):
        for profile, text in case["payloads"].items():
            covered = a2a._profiles.project(case["card"], profile)[0]
            assert native.canonicalize(covered) == pure.canonicalize(covered) == text.encode()


def _entry_strategy():
    from ajpcore.strategies import json_values

    header = st.fixed_dictionaries({}, optional={"alg": st.sampled_from(["EdDSA", "ES256", "none", "HS256"]) | json_values(),
                                                 "kid": st.sampled_from(["ed", "ec"]) | json_values(), "typ": json_values(),
                                                 "crit": json_values(), "b64": json_values(), "jku": json_values()})
    protected = header.map(lambda h: b64u(ajpcore.canonicalize(h))) | st.text(max_size=12) | json_values()
    return st.fixed_dictionaries({}, optional={"protected": protected, "signature": st.text("AQgw-_", max_size=90) | json_values(),
                                               "header": json_values()}) | json_values()


@settings(max_examples=100)
@given(st.lists(st.deferred(_entry_strategy), min_size=1, max_size=3))
def test_hostile_signature_entries_end_in_a_signature_error(entries):
    with pytest.raises(ajpcore.SignatureError) as info:
        a2a.verify_card(dict(CARD, signatures=entries), JWKS)
    assert [r.valid for r in info.value.reports] == [False] * len(entries)


# -- sign_card's default: §8.4.1 as the SDKs read it (issue 31) ---------------------------------

DEFAULTS_CARD = dict(CARD, description="", iconUrl="", securitySchemes={},
                     capabilities={"streaming": False, "extensions": [{"uri": "https://ext.example", "required": False, "params": {"n": 1.5, "e": ""}}]},
                     skills=[{"id": "f", "name": "F \u00e9", "description": "d", "tags": []}])


def test_default_profile_omits_default_and_empty_values(core):
    # On main the default signed every member (`served`): `"required": false` and the empties were covered,
    # which both SDKs 1.3.0 refuse (A2A §8.4.1 removes default values before signing).
    card = signed(DEFAULTS_CARD)
    covered = a2a._jws.b64url_decode(card["signatures"][0]["signature"], "s")  # a real signature
    assert len(covered) == 64
    result = a2a.verify_card(card, JWKS)
    assert result.payload == a2a.payload(DEFAULTS_CARD, "sdk")
    for absent in (b'"required"', b'""', b'"iconUrl"', b'"securitySchemes"', b'"tags"'):
        assert absent not in result.payload
    assert b'"streaming":false' in result.payload and b'"n":1.5' in result.payload
    with pytest.raises(ajpcore.BadSignature):
        a2a.verify_card(card, JWKS, profile="served")


def test_default_profile_is_spec_for_a_card_without_empty_values(core):
    result = a2a.verify_card(signed(dict(CARD, capabilities={"streaming": False})), JWKS, profile="spec")
    assert result.payload == a2a.payload(dict(CARD, capabilities={"streaming": False}), "sdk")


@pytest.mark.parametrize("change, where", [
    ({"x-extra": "kept by ajpcore, dropped by the SDKs"}, "/x-extra"),
    ({"supportedInterfaces": [{"url": "https://a.example", "protocolBinding": "A", "protocol_binding": "B", "protocolVersion": "1.0"}]},
     "/supportedInterfaces/0/protocol_binding"),
    ({"provider": {"organization": "O", "url": "https://o.example", "x": [1]}}, "/provider/x"),
])
def test_default_profile_refuses_a_member_that_would_travel_unsigned(core, change, where):
    card = dict(CARD, **change)
    with pytest.raises(ajpcore.KeyUsageError, match=f"`{where}` holds a value") as caught:
        signed(card)
    assert "profile='served'" in str(caught.value)
    assert a2a.verify_card(signed(card, profile="served"), JWKS).profile == "served"  # named: signed as asked


def test_default_profile_lets_empty_unknown_members_go(core):
    card = dict(CARD, **{"x-empty": "", "x-none": None, "x-nested": {"a": [], "b": {}}})
    assert a2a.verify_card(signed(card), JWKS).unsigned_members == ("/x-empty", "/x-none", "/x-nested")


def test_cryptography_ed25519_keys_are_taken_like_its_p256_keys(core):
    from cryptography.hazmat.primitives.asymmetric import ed25519

    theirs = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # the seed of ED
    assert a2a.jwk_from_key(theirs, kid="ed") == a2a.jwk_from_key(ED, kid="ed")
    assert a2a.jwk_from_key(theirs.public_key(), kid="ed", alg="EdDSA") == a2a.jwk_from_key(ED.public_key, kid="ed", alg="EdDSA")
    card = a2a.sign_card(CARD, theirs, kid="ed", alg="EdDSA")
    assert card == signed(CARD)  # Ed25519 is deterministic: the same bytes as ajpcore's own key
    assert a2a.verify_card(card, JWKS).alg == "EdDSA"
    with pytest.raises(ajpcore.UnsupportedAlgorithm, match="needs a EC key"):
        a2a.sign_card(CARD, theirs, kid="ed", alg="ES256")


def test_sdk_adapter_imports_without_a2a_sdk(monkeypatch):
    # ajpcore.a2a.sdk is no hard dependency: it imports a2a-sdk on first use and says what to install.
    import ajpcore.a2a.sdk as adapter

    monkeypatch.setitem(__import__("sys").modules, "a2a", None)
    monkeypatch.setitem(__import__("sys").modules, "a2a.utils.signing", None)
    verifier = adapter.CardVerifier(JWKS)
    with pytest.raises(ImportError, match=r"pip install 'a2a-sdk\[signing\]'"):
        verifier(object())
