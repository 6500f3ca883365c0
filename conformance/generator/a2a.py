"""``a2a.json``: A2A Agent Card signatures (A2A v1.0 §8.4), with expectations made here, not by ajpcore.

Three kinds of case, told apart by their fields:
- payload cases (``payloads``): the RFC 8785 text a signature covers under each profile,
  and the JSON Pointers each profile leaves out (``unsigned``);
- verify cases (``expect`` + ``card`` + ``jwks``): a signed card, the keys the verifier
  trusts, optional ``profile``/``algorithms``/``allowed_jku``, and the verdict;
- key-set cases (``expect`` + ``jwks`` or ``jwks_text``, no ``card``): read or refuse a JWKS.

The field presence of every card field is read from ``tests/vectors/a2a/a2a.proto`` by
``tests/a2a_proto.py``; the three profiles are written again below from docs/a2a.md's
definitions (not imported from ajpcore), canonical text comes from ``reference.jcs``, and
signatures from pyca/cryptography: RFC 8032 keys, RFC 6979 deterministic ECDSA, RSA
PKCS#1 v1.5, and PSS with salts derived from the message so the file is reproducible.
The ``sdk`` payloads are also checked against a2a-python and @a2a-js/sdk by
``tests/a2a/test_sdk_interop.py``.  Keys are public test keys: never use them in production.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import importlib.util
from typing import Any, Dict, List, Optional, Tuple

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from . import reference as ref
from .keys import KEY1, KEY2, L

_spec = importlib.util.spec_from_file_location("a2a_proto", ref.REPO / "tests" / "a2a_proto.py")
assert _spec is not None and _spec.loader is not None
a2a_proto = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(a2a_proto)
FIELDS = a2a_proto.card_messages()

N256 = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
RSA_P = 0xf5bba5920cfd24834cf8824497d7723b1bc068b0f4bad722b798f98179ef3168d28dbf2e66e5fc89382652d9911186558f799b6e645981703bf00d918896c8b60d539e0a9748a194d6a59fc386d1cc18cef537d72ee47375bb0d4d543d222bfd9f1e3986bf43c87c39973b323e72c554da16d3f335e95c47e892ae5310534c7d
RSA_Q = 0xdc3726b6ebf90ade9c27f48f8091849e8ece12e1475c9de879dc6ac195457ec4cbc13f5ee06ce136f12678e6b967c57022e873307d7f90f5a6829e8c0da21f4fe0bf11af3ea5ec70fc74eb875fe0c4d8b73b043d723b9967b09cb8b5c41580a439edd9aae48833241065c45767851e5bbc398f68eabb9dcac493aaae4995fb73
RSA1024_P = 0xfb020f828c0fb47bf536f9e350c1337d0c5ca012e81016e2c69bf6fb83014d19971a3b22a2fa73f84e092ade6b2f53d1835365d88ee61bef5bcf82b50b5808c7
RSA1024_Q = 0xd42eef517d59aa13f5570ceab7b78d6b6e9f4ccd6a79120687acc1d5df9ed40412630393f6edb6579cb24217556de7437585558408bace836be7a490e103afa3


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# -- keys -------------------------------------------------------------------------------------

EC_KEY = ec.derive_private_key(int.from_bytes(hashlib.sha256(b"ajpcore a2a conformance P-256").digest(), "big") % N256, ec.SECP256R1())
RSA_KEY = rsa.RSAPrivateNumbers(
    RSA_P, RSA_Q, pow(65537, -1, (RSA_P - 1) * (RSA_Q - 1)), pow(65537, -1, (RSA_P - 1) * (RSA_Q - 1)) % (RSA_P - 1),
    pow(65537, -1, (RSA_P - 1) * (RSA_Q - 1)) % (RSA_Q - 1), pow(RSA_Q, -1, RSA_P),
    rsa.RSAPublicNumbers(65537, RSA_P * RSA_Q)).private_key()
RSA1024_N = RSA1024_P * RSA1024_Q


def _uint(n: int) -> str:
    return b64u(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def jwk_ed(key: Any, kid: str) -> Dict[str, Any]:
    return {"kty": "OKP", "crv": "Ed25519", "x": b64u(key.raw), "kid": kid}


def jwk_ec(kid: str) -> Dict[str, Any]:
    nums = EC_KEY.public_key().public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": b64u(nums.x.to_bytes(32, "big")), "y": b64u(nums.y.to_bytes(32, "big")), "kid": kid}


def jwk_rsa(kid: str, n: int = RSA_P * RSA_Q) -> Dict[str, Any]:
    return {"kty": "RSA", "n": _uint(n), "e": "AQAB", "kid": kid}


JWKS = {"keys": [jwk_ed(KEY1, "ed-1"), jwk_ed(KEY2, "ed-2"), jwk_ec("ec-1"), jwk_rsa("rsa-1")]}
KIDS = {"ed-1": ("EdDSA", KEY1), "ed-2": ("EdDSA", KEY2), "ec-1": ("ES256", EC_KEY), "rsa-1": ("RS256", RSA_KEY)}
RSA_PEM = RSA_KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _pss(data: bytes, salt: bytes) -> bytes:
    """RSASSA-PSS (RFC 8017 §9.1.1) with SHA-256 and MGF1-SHA256, salt given, written out for a fixed file."""
    n = RSA_P * RSA_Q
    em_bits = n.bit_length() - 1
    em_len = (em_bits + 7) // 8
    m_hash = hashlib.sha256(data).digest()
    h = hashlib.sha256(b"\0" * 8 + m_hash + salt).digest()
    db = b"\0" * (em_len - len(salt) - 32 - 2) + b"\x01" + salt
    mask = b"".join(hashlib.sha256(h + i.to_bytes(4, "big")).digest() for i in range((len(db) + 31) // 32))[: len(db)]
    masked = bytes(a ^ b for a, b in zip(db, mask))
    masked = bytes([masked[0] & (0xFF >> (8 * em_len - em_bits))]) + masked[1:]
    em = int.from_bytes(masked + h + b"\xbc", "big")
    d = RSA_KEY.private_numbers().d
    return pow(em, d, n).to_bytes((n.bit_length() + 7) // 8, "big")


def raw_signature(alg: str, key: Any, data: bytes, *, salt_len: int = 32) -> bytes:
    if alg == "EdDSA":
        return key.private.sign(data)
    if alg == "ES256":
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256(), deterministic_signing=True)))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    if alg == "RS256":
        from cryptography.hazmat.primitives.asymmetric import padding

        return key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    if alg == "PS256":
        return _pss(data, hashlib.sha256(b"salt" + data).digest()[:salt_len] if salt_len <= 32 else b"")
    raise AssertionError(alg)


# -- the profiles, written from docs/a2a.md -----------------------------------------------------


def _kind(message: str, name: str) -> Optional[Tuple[bool, str, str]]:
    field = FIELDS.get(message, {}).get(name)
    if field is None:
        return None
    kind, ftype = field
    return kind.startswith("required:"), kind.split(":")[-1], ftype


def _default(kind: str, ftype: str, value: Any) -> bool:
    if kind == "implicit":
        return (ftype == "string" and value == "" and isinstance(value, str)) or (ftype == "bool" and value is False)
    if kind == "repeated":
        return value == [] and isinstance(value, list)
    if kind == "map":
        return value == {} and isinstance(value, dict)
    return False


def spec_view(obj: Dict[str, Any], message: str, at: str, out_ptrs: List[str]) -> Dict[str, Any]:
    out = {}
    for name, value in obj.items():
        here = at + "/" + name.replace("~", "~0").replace("/", "~1")
        info = _kind(message, name)
        if info is None:
            out[name] = value
            continue
        required, kind, ftype = info
        if value is None or (not required and _default(kind, ftype, value)):
            out_ptrs.append(here)
            continue
        if ftype in FIELDS and kind == "repeated" and isinstance(value, list):
            value = [spec_view(v, ftype, f"{here}/{i}", out_ptrs) if isinstance(v, dict) else v for i, v in enumerate(value)]
        elif ftype in FIELDS and kind == "map" and isinstance(value, dict):
            value = {k: spec_view(v, ftype, here + "/" + k, out_ptrs) if isinstance(v, dict) else v for k, v in value.items()}
        elif ftype in FIELDS and isinstance(value, dict):
            value = spec_view(value, ftype, here, out_ptrs)
        out[name] = value
    return out


_GONE = object()


def sdk_clean(value: Any, message: Optional[str], is_map: bool, at: str, out_ptrs: List[str]) -> Any:
    if value is None or value == "" and isinstance(value, str):
        return _GONE
    if isinstance(value, list):
        lost: List[str] = []
        kept = []
        for i, v in enumerate(value):
            got = sdk_clean(v, message, False, f"{at}/{i}", lost)
            if got is _GONE:
                lost.append(f"{at}/{i}")
            else:
                kept.append(got)
        if kept:
            out_ptrs.extend(lost)
        return kept or _GONE
    if isinstance(value, dict):
        mine: List[str] = []
        out = {}
        for name, v in value.items():
            here = at + "/" + name.replace("~", "~0").replace("/", "~1")
            if message is not None and not is_map:
                # a proto field name (snake case) reads as the field when its JSON name is absent
                camel = name.split("_")[0] + "".join(w[:1].upper() + w[1:] for w in name.split("_")[1:])
                info = _kind(message, camel) if camel == name or camel not in value else None
                if info is None:
                    mine.append(here)
                    continue
                _, kind, ftype = info
                if kind == "implicit" and _default(kind, ftype, v):
                    mine.append(here)
                    continue
                got = sdk_clean(v, ftype if ftype in FIELDS else None, kind == "map", here, mine)
            else:
                got = sdk_clean(v, message, False, here, mine)
            if got is _GONE:
                mine.append(here)
            else:
                out[camel if message is not None and not is_map else name] = got
        if not out:
            return _GONE
        out_ptrs.extend(mine)
        return out
    return value


def view(card: Dict[str, Any], profile: str) -> Tuple[Dict[str, Any], List[str]]:
    body = {k: v for k, v in card.items() if k != "signatures"}
    ptrs: List[str] = []
    if profile == "served":
        return body, ptrs
    if profile == "spec":
        return spec_view(body, "AgentCard", "", ptrs), ptrs
    got = sdk_clean(body, "AgentCard", False, "", ptrs)
    if got is _GONE:  # pragma: no cover - every pack card has a name
        return {}, [p for p in ptrs]
    # `sdk_clean` reports the members of the top object itself into `ptrs` only when it survives.
    return got, ptrs


def payload_bytes(card: Dict[str, Any], profile: str) -> bytes:
    return ref.jcs(view(card, profile)[0])


def entry(card: Dict[str, Any], kid: str, *, alg: Optional[str] = None, header: Optional[Dict[str, Any]] = None,
          protected_raw: Optional[bytes] = None, profile: str = "served", key: Any = None, salt_len: int = 32) -> Dict[str, Any]:
    """One AgentCardSignature over ``card`` under ``profile``, signed with the key of ``kid``."""
    default_alg, default_key = KIDS.get(kid, ("EdDSA", KEY1))
    alg = alg or default_alg
    head = {"alg": alg, "kid": kid, "typ": "JOSE"} if header is None else header
    protected = b64u(ref.jcs(head) if protected_raw is None else protected_raw)
    data = (protected + "." + b64u(payload_bytes(card, profile))).encode("ascii")
    return {"protected": protected, "signature": b64u(raw_signature(alg, key or default_key, data, salt_len=salt_len))}


def with_signatures(card: Dict[str, Any], *entries: Dict[str, Any]) -> Dict[str, Any]:
    out = copy.deepcopy(card)
    out["signatures"] = list(entries)
    return out


# -- cards ------------------------------------------------------------------------------------

ASTRAL, FI = "\U0001f600key", "\ufb01key"  # UTF-16 order: ASTRAL < FI; code point order: FI < ASTRAL

CARD: Dict[str, Any] = {
    "name": "Wetter-Agent \u00e9t\u00e9 \u5929\u6c17 \U0001f326",
    "description": "Pr\u00e9visions m\u00e9t\u00e9o \u2014 \u300c\u5929\u6c17\u300d, tabs\tand \"quotes\" \\ and \u0007",
    "supportedInterfaces": [{"url": "https://agent.example/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
    "provider": {"url": "https://provider.example", "organization": "Example \u00d8rg"},
    "version": "1.0.0",
    "documentationUrl": "https://agent.example/docs",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "extensions": [{"uri": "https://ext.example/geo", "description": "geo", "required": True,
                        "params": {FI: 1, ASTRAL: 2, "n": [5.0, 0.1, 1e21, 1e-7, -0.0, 9007199254740991, 1.5e-320, 2**64],
                                   "z\u00e9": {"\u00e9": True}}}],
    },
    "securitySchemes": {
        FI: {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
        ASTRAL: {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
    },
    "securityRequirements": [{"schemes": {ASTRAL: {"list": ["read"]}}}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [{"id": "forecast", "name": "Forecast", "description": "Daily forecast", "tags": ["weather", "\u5929\u6c17"]}],
    "iconUrl": "https://agent.example/icon.png",
}

SPEC_EXAMPLE: Dict[str, Any] = {  # A2A v1.0 §8.4.1 "Example of Default Value Removal", verbatim
    "name": "Example Agent", "description": "",
    "capabilities": {"streaming": False, "pushNotifications": False, "extensions": []}, "skills": [],
}
SPEC_EXAMPLE_TEXT = '{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}'

NESTED_DEFAULTS: Dict[str, Any] = {
    "name": "Nested", "description": "", "version": "1",
    "supportedInterfaces": [{"url": "https://n.example", "protocolBinding": "HTTP+JSON", "tenant": "", "protocolVersion": "1.0"}],
    "capabilities": {"extensions": [{"uri": "https://ext.example/x", "description": "", "required": False, "params": {}},
                                    {"uri": "", "params": {"keep": 0, "drop": "", "gone": [], "deep": {"a": {"b": ""}}, "null": None}}]},
    "securitySchemes": {"oauth": {"oauth2SecurityScheme": {"description": "", "flows": {"authorizationCode": {
        "authorizationUrl": "https://n.example/auth", "tokenUrl": "https://n.example/token", "refreshUrl": "",
        "scopes": {}, "pkceRequired": False}}}}, "mtls": {"mtlsSecurityScheme": {}}},
    "securityRequirements": [{"schemes": {}}],
    "defaultInputModes": [], "defaultOutputModes": ["text/plain", ""],
    "skills": [{"id": "s", "name": "S", "description": "", "tags": [], "examples": []}],
    "provider": None,
}

UNKNOWN = dict(copy.deepcopy(CARD), **{"x-served-only": {"note": "not in the proto"}, "url": "https://agent.example/a2a/v1"})
UNKNOWN["capabilities"] = dict(UNKNOWN["capabilities"], beta=True)
SNAKE = {"name": "Snake", "description": "d", "version": "1", "capabilities": {"streaming": True},
         "supportedInterfaces": [{"url": "https://s.example", "protocol_binding": "JSONRPC", "protocolVersion": "1.0"}],
         "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}

PAYLOAD_CARDS = [
    ("rich", "non-ASCII text, escapes, keys whose UTF-16 and code point orders differ, ES6 numbers, Struct params", CARD),
    ("spec-example", "the worked example of A2A §8.4.1: `spec` must give the section's own text", SPEC_EXAMPLE),
    ("nested-defaults", "defaults at every depth: implicit scalars, REQUIRED empties, empty maps, Struct empties, null", NESTED_DEFAULTS),
    ("unknown-members", "members the proto does not know, at the top and nested (v0.3 `url`, `beta`)", UNKNOWN),
    ("snake-case-alias", "a proto field name (`protocol_binding`) for its JSON name: read as the field under `sdk` (ProtoJSON), verbatim under `spec` and `served`", SNAKE),
]


def payload_cases() -> List[Dict[str, Any]]:
    cases = []
    for name, why, card in PAYLOAD_CARDS:
        views = {p: view(card, p) for p in ("served", "spec", "sdk")}
        cases.append({"id": f"payload-{name}", "why": why, "card": card,
                      "payloads": {p: ref.jcs(v[0]).decode("utf-8") for p, v in views.items()},
                      "unsigned": {p: v[1] for p, v in views.items()}})
    spec = next(c for c in cases if c["id"] == "payload-spec-example")
    if spec["payloads"]["spec"] != SPEC_EXAMPLE_TEXT:
        raise AssertionError("the spec profile no longer reproduces A2A §8.4.1's example")
    return cases


def verify(cid: str, why: str, card: Dict[str, Any], expect: str, **extra: Any) -> Dict[str, Any]:
    case = {"id": cid, "why": why, "card": card, "jwks": extra.pop("jwks", JWKS), "expect": expect}
    case.update(extra)
    return case


def _tamper(card: Dict[str, Any], **changes: Any) -> Dict[str, Any]:
    out = copy.deepcopy(card)
    out.update(changes)
    return out


def _flip_last(text: str) -> str:
    raw = bytearray(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    raw[-1] ^= 1
    return b64u(bytes(raw))


def verify_cases() -> List[Dict[str, Any]]:
    c = CARD
    head = {"alg": "EdDSA", "kid": "ed-1", "typ": "JOSE"}
    cases = []
    for kid, alg in (("ed-1", "EdDSA"), ("ec-1", "ES256"), ("rsa-1", "RS256"), ("rsa-1", "PS256")):
        cases.append(verify(f"valid-{alg.lower()}", f"{alg} over the `served` payload of the rich card",
                            with_signatures(c, entry(c, kid, alg=alg)), "valid", expect_profile="served", expect_kid=kid, expect_unsigned=[]))
    for profile in ("served", "spec", "sdk"):
        card = NESTED_DEFAULTS
        ptrs = view(card, profile)[1]
        cases.append(verify(f"profile-{profile}", f"signed under `{profile}`: the default verifier finds it and names it",
                            with_signatures(card, entry(card, "ed-1", profile=profile)), "valid", expect_profile=profile, expect_unsigned=ptrs))
        cases.append(verify(f"profile-{profile}-spec-example", f"the §8.4.1 example card signed under `{profile}`",
                            with_signatures(SPEC_EXAMPLE, entry(SPEC_EXAMPLE, "ed-1", profile=profile)), "valid", expect_profile=profile))
    sdk_signed = with_signatures(NESTED_DEFAULTS, entry(NESTED_DEFAULTS, "ed-1", profile="sdk"))
    cases += [
        verify("profile-forced-served-refuses-sdk", "signed under `sdk`, verified with profile `served` only: refused", sdk_signed, "bad", profile="served"),
        verify("profile-forced-sdk", "signed under `sdk`, verified with profile `sdk`", sdk_signed, "valid", profile="sdk", expect_profile="sdk"),
        verify("unknown-member-added-after-signing", "a member the proto does not know, added after signing: only `sdk` verifies, and reports it",
               _tamper(with_signatures(c, entry(c, "ed-1")), **{"x-added": "by a proxy"}), "valid", expect_profile="sdk", expect_unsigned=["/x-added"]),
        verify("unknown-member-added-served-only", "the same card with profile `served`: refused, the new member is not covered",
               _tamper(with_signatures(c, entry(c, "ed-1")), **{"x-added": "by a proxy"}), "bad", profile="served"),
        verify("unknown-member-signed-served", "unknown members signed under `served` are covered",
               with_signatures(UNKNOWN, entry(UNKNOWN, "ed-1")), "valid", expect_profile="served", expect_unsigned=[]),
        verify("tampered-name", "the name changed after signing", _tamper(with_signatures(c, entry(c, "ed-1")), name="Evil Agent"), "bad"),
        verify("tampered-nested-param", "a Struct value deep in an extension's params changed after signing",
               _tamper(with_signatures(c, entry(c, "ed-1")), capabilities=dict(c["capabilities"], extensions=[dict(c["capabilities"]["extensions"][0], params={**c["capabilities"]["extensions"][0]["params"], "z\u00e9": {"\u00e9": False}})])), "bad"),
        verify("tampered-signature-bit", "one bit of the signature flipped",
               with_signatures(c, dict(entry(c, "ed-1"), signature=_flip_last(entry(c, "ed-1")["signature"]))), "bad"),
        verify("alg-none", "`alg: none` with an empty signature",
               with_signatures(c, {"protected": b64u(ref.jcs({"alg": "none", "kid": "ed-1", "typ": "JOSE"})), "signature": ""}), "unsupported_algorithm"),
    ]
    # Algorithm confusion: HMAC keyed with what the verifier holds as a public key.
    for name, secret, kid in (("rsa-pem", RSA_PEM, "rsa-1"), ("ed-raw", KEY1.raw, "ed-1"), ("jwk-x", JWKS["keys"][0]["x"].encode(), "ed-1")):
        protected = b64u(ref.jcs({"alg": "HS256", "kid": kid, "typ": "JOSE"}))
        mac = hmac.new(secret, (protected + "." + b64u(payload_bytes(c, "served"))).encode(), hashlib.sha256).digest()
        cases.append(verify(f"alg-confusion-hs256-{name}", f"HS256 keyed with the public key ({name}): refused, never computed",
                            with_signatures(c, {"protected": protected, "signature": b64u(mac)}), "unsupported_algorithm"))
    cases += [
        verify("alg-key-mismatch-eddsa-on-ec", "`EdDSA` naming a P-256 key", with_signatures(c, entry(c, "ec-1", alg="EdDSA", key=KEY1)), "unsupported_algorithm"),
        verify("alg-key-mismatch-es256-on-rsa", "`ES256` naming an RSA key", with_signatures(c, entry(c, "rsa-1", alg="ES256", key=EC_KEY)), "unsupported_algorithm"),
        verify("alg-not-allowed", "a valid ES256 signature when the caller allows EdDSA only", with_signatures(c, entry(c, "ec-1")), "unsupported_algorithm", algorithms=["EdDSA"]),
        verify("jku-foreign", "a `jku` outside the caller's allow-list is refused (the signer does not pick the trust root)",
               with_signatures(c, entry(c, "ed-1", header=dict(head, jku="https://evil.example/jwks.json"))), "untrusted_key",
               allowed_jku=["https://agent.example/.well-known/jwks.json"]),
        verify("jku-allowed", "a `jku` on the allow-list; the key still comes from the caller's set",
               with_signatures(c, entry(c, "ed-1", header=dict(head, jku="https://agent.example/.well-known/jwks.json"))), "valid",
               allowed_jku=["https://agent.example/.well-known/jwks.json"], expect_kid="ed-1"),
        verify("jku-without-allow-list", "a `jku` is never fetched; without an allow-list it is only reported",
               with_signatures(c, entry(c, "ed-1", header=dict(head, jku="https://anywhere.example/jwks.json"))), "valid"),
        verify("kid-unknown", "a `kid` that is not in the caller's set", with_signatures(c, entry(c, "ed-9", key=KEY1)), "untrusted_key"),
        verify("rotation-old-and-new", "rotation: an old key no longer trusted, then the new one: valid by the new key",
               with_signatures(c, entry(c, "ed-old", key=KEY1), entry(c, "ed-2")), "valid", expect_kid="ed-2"),
        verify("rotation-two-valid", "two valid signatures: the first reported", with_signatures(c, entry(c, "ed-1"), entry(c, "ec-1")), "valid", expect_kid="ed-1"),
        verify("rotation-untrusted-and-tampered", "no signature verifies: the forged one is the refusal reported",
               _tamper(with_signatures(c, entry(c, "ed-old", key=KEY1), entry(c, "ed-2")), version="6.6.6"), "bad"),
        verify("rotation-safest-profile-wins", "one signature over `sdk`, one over `served`: `served` is reported",
               with_signatures(NESTED_DEFAULTS, entry(NESTED_DEFAULTS, "ed-2", profile="sdk"), entry(NESTED_DEFAULTS, "ed-1")), "valid",
               expect_kid="ed-1", expect_profile="served"),
        verify("unsigned-no-member", "no `signatures` member", copy.deepcopy(c), "unsigned"),
        verify("unsigned-empty", "`signatures: []`", with_signatures(c), "unsigned"),
        verify("crit-unknown", "`crit` naming an extension ajpcore does not implement",
               with_signatures(c, entry(c, "ed-1", header=dict(head, crit=["exp"], exp=1)), ), "malformed"),
        verify("crit-b64-false", "RFC 7797 unencoded payload (`b64: false`)", with_signatures(c, entry(c, "ed-1", header=dict(head, crit=["b64"], b64=False))), "malformed"),
        verify("crit-b64-true", "`b64: true` in `crit`: the ordinary encoded payload", with_signatures(c, entry(c, "ed-1", header=dict(head, crit=["b64"], b64=True))), "valid"),
        verify("header-duplicate-name", "a protected header with `alg` twice (a lax parser keeps the last)",
               with_signatures(c, entry(c, "ed-1", protected_raw=b'{"alg":"none","kid":"ed-1","typ":"JOSE","alg":"EdDSA"}')), "malformed"),
        verify("header-not-json", "a protected header that is not JSON", with_signatures(c, entry(c, "ed-1", protected_raw=b'{"alg":"EdDSA",}')), "malformed"),
        verify("header-lone-surrogate", "a protected header with a lone surrogate escape (not I-JSON)",
               with_signatures(c, entry(c, "ed-1", protected_raw=b'{"alg":"EdDSA","kid":"ed-1","typ":"JOSE","x":"\\ud800"}')), "malformed"),
        verify("header-typ-jwt", "`typ` other than JOSE", with_signatures(c, entry(c, "ed-1", header=dict(head, typ="JWT"))), "malformed"),
        verify("header-no-kid", "no `kid`: keys are selected by `kid`", with_signatures(c, entry(c, "ed-1", header={"alg": "EdDSA", "typ": "JOSE"})), "malformed"),
        verify("header-unprotected-overlap", "the unprotected `header` repeats `kid`",
               with_signatures(c, dict(entry(c, "ed-1"), header={"kid": "ed-2"})), "malformed"),
        verify("header-unprotected-extra", "an unprotected `header` with other names is allowed (and not covered)",
               with_signatures(c, dict(entry(c, "ed-1"), header={"note": "x"})), "valid"),
    ]
    good = entry(c, "ed-1")
    padded = good["protected"] + "=" * (-len(good["protected"]) % 4 or 4)
    cases += [
        verify("b64-protected-padded", "`protected` with `=` padding", with_signatures(c, dict(good, protected=padded)), "malformed"),
        verify("b64-protected-std-alphabet", "`protected` in the standard alphabet (`+`, `/`)",
               with_signatures(c, dict(good, protected=good["protected"].replace("-", "+").replace("_", "/") + "+")), "malformed"),
        verify("b64-signature-pad-bits", "the signature's last character with non-zero pad bits",
               with_signatures(c, dict(good, signature=good["signature"][:-1] + chr(ord(good["signature"][-1]) + 1))), "malformed"),
        verify("b64-signature-whitespace", "a newline inside the signature", with_signatures(c, dict(good, signature=good["signature"][:40] + "\n" + good["signature"][40:])), "malformed"),
    ]
    # ES256 edge values; EdDSA S >= L; RSA lengths; PSS salt.
    ecs = entry(c, "ec-1")
    rs = base64.urlsafe_b64decode(ecs["signature"] + "==")
    r, s = int.from_bytes(rs[:32], "big"), int.from_bytes(rs[32:], "big")
    flipped = r.to_bytes(32, "big") + (N256 - s).to_bytes(32, "big")
    ed = entry(c, "ed-1")
    eds = base64.urlsafe_b64decode(ed["signature"] + "==")
    s_plus_l = eds[:32] + (int.from_bytes(eds[32:], "little") + L).to_bytes(32, "little")
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    cases += [
        verify("es256-other-s", "ES256 with s replaced by n - s (the other valid signature): accepted, as RFC 7518 does",
               with_signatures(c, dict(ecs, signature=b64u(flipped))), "valid"),
        verify("es256-s-zero", "ES256 with s = 0", with_signatures(c, dict(ecs, signature=b64u(rs[:32] + bytes(32)))), "bad"),
        verify("es256-r-is-n", "ES256 with r = n (out of range)", with_signatures(c, dict(ecs, signature=b64u(N256.to_bytes(32, "big") + rs[32:]))), "bad"),
        verify("es256-der", "ES256 written as DER (the X.509 form), not raw r || s", with_signatures(c, dict(ecs, signature=b64u(encode_dss_signature(r, s)))), "bad"),
        verify("eddsa-s-plus-l", "Ed25519 with S + L (malleated, S >= L)", with_signatures(c, dict(ed, signature=b64u(s_plus_l))), "bad"),
        verify("rs256-short", "an RS256 signature one byte short", with_signatures(c, dict(entry(c, "rsa-1"), signature=b64u(base64.urlsafe_b64decode(entry(c, "rsa-1")["signature"] + "==")[1:]))), "bad"),
        verify("ps256-salt-20", "PS256 with a 20-byte salt (RFC 7518 §3.5 fixes 32)", with_signatures(c, entry(c, "rsa-1", alg="PS256", salt_len=20)), "bad"),
    ]
    return cases


def jwks_cases() -> List[Dict[str, Any]]:
    ed = JWKS["keys"][0]
    small_order = b64u(bytes.fromhex("0100000000000000000000000000000000000000000000000000000000000000"))
    nums = EC_KEY.public_key().public_numbers()
    off_curve = dict(jwk_ec("ec-bad"), y=b64u(((nums.y + 1) % (2**256)).to_bytes(32, "big")))

    def one(cid: str, why: str, keys: List[Any], expect: str) -> Dict[str, Any]:
        return {"id": cid, "why": why, "jwks": {"keys": keys}, "expect": expect}

    return [
        one("jwks-valid", "the pack's key set: OKP, EC P-256, RSA 2048", JWKS["keys"], "valid"),
        one("jwks-private-d", "an OKP key with its private `d`", [dict(ed, d=b64u(bytes(32)))], "bad_key"),
        one("jwks-oct", "a symmetric `oct` key", [{"kty": "oct", "k": "c2VjcmV0", "kid": "h"}], "bad_key"),
        one("jwks-duplicate-kid", "two keys with the same `kid`", [ed, dict(JWKS["keys"][1], kid="ed-1")], "bad_key"),
        one("jwks-unknown-kty", "`kty` `XYZ`", [{"kty": "XYZ", "kid": "x"}], "bad_key"),
        one("jwks-no-kid", "a key without `kid`", [{k: v for k, v in ed.items() if k != "kid"}], "bad_key"),
        one("jwks-rsa-1024", "an RSA key of 1024 bits", [jwk_rsa("rsa-weak", RSA1024_N)], "bad_key"),
        one("jwks-rsa-e-leading-zero", "RSA `e` with a leading zero octet", [dict(jwk_rsa("rsa-z"), e=b64u(b"\0\x01\0\x01"))], "bad_key"),
        one("jwks-ec-off-curve", "an EC point not on P-256", [off_curve], "bad_key"),
        one("jwks-ec-p384", "`crv` `P-384`", [dict(jwk_ec("ec-384"), crv="P-384")], "bad_key"),
        one("jwks-okp-x25519", "an X25519 (key agreement) key", [dict(ed, crv="X25519")], "bad_key"),
        one("jwks-okp-small-order", "an Ed25519 key of small order", [dict(ed, x=small_order)], "bad_key"),
        one("jwks-x-padded", "`x` with `=` padding", [dict(ed, x=ed["x"] + "=")], "bad_key"),
        one("jwks-use-enc", "`use: enc`", [dict(ed, use="enc")], "bad_key"),
        one("jwks-alg-mismatch", "`alg: ES256` on an OKP key", [dict(ed, alg="ES256")], "bad_key"),
        {"id": "jwks-text-duplicate-member", "why": "JWKS text with `x` twice (strict I-JSON)",
         "jwks_text": '{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"d","x":"%s","x":"%s"}]}' % (ed["x"], JWKS["keys"][1]["x"]), "expect": "bad_key"},
    ]


def build() -> List[Dict[str, Any]]:
    return payload_cases() + verify_cases() + jwks_cases()
