"""``a2a.verify_card`` on cards, protected headers, JWKS and ``signatures`` arrays built from the input.

The input picks, byte by byte: members added to a small card (any value ``_common.value``
builds, under names the profiles treat differently: empty, default-valued, outside the
proto); a ``signatures`` array of 0 to 11 entries, each a real signature (EdDSA, ES256,
RS256, PS256, under any profile, over this card or another), one with a protected header
written from the input (raw bytes, or JSON with fuzzed ``alg``/``kid``/``typ``/``jku``/``crit``/
``b64``), a flipped or truncated signature, an unprotected ``header``, or a non-object; the
key set (the real JWKS, or a fuzzed one); ``max_signatures``, ``algorithms``, ``profile`` and
``allowed_jku``.

Checked: the twin under test (its decoder and canonicalizer in ``ajpcore._core.impl``) gives
the outcome the pure twin gives (the verified kid, alg, profile, unsigned members and payload,
or the refusal's class and message); only ``ajpcore`` errors are raised; and no call runs more
than ``max_signatures`` x 3 profiles signature verifications.
"""

import base64
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Bytes, fuzz_main, pure, same, text, value  # noqa: E402

from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402

import ajpcore  # noqa: E402
from ajpcore import _core, a2a  # noqa: E402
from ajpcore.a2a import _card  # noqa: E402
from ajpcore.keys import Ed25519PrivateKey  # noqa: E402

ED = Ed25519PrivateKey.from_seed(bytes(range(32)))
EC = ec.derive_private_key(12345678901234567890, ec.SECP256R1())
RSA = rsa.generate_private_key(65537, 2048)
KEYS = (("ed", "EdDSA", ED), ("ec", "ES256", EC), ("rs", "RS256", RSA), ("ps", "PS256", RSA))
JWKS = {"keys": [a2a.jwk_from_key(key, kid=kid) for kid, _, key in KEYS]}
NAMES = ("name", "description", "version", "iconUrl", "capabilities", "skills", "x-extra", "defaultInputModes",
         "supportedInterfaces", "signatures", "provider", "")
ALGS = ("EdDSA", "ES256", "RS256", "PS256", "none", "HS256", "", "eddsa")
KIDS = ("ed", "ec", "rs", "ps", "unknown", "")
JKUS = ("https://agent.example/jwks.json", "https://evil.example/jwks.json")

_verifications = [0]
_real_verify = _card.verify_signature


def _counting_verify(*args):
    _verifications[0] += 1
    return _real_verify(*args)


_card.verify_signature = _counting_verify


def json_value(src: Bytes, depth: int):
    """A value with a canonical JSON form (what a decoded card holds); else a string."""
    got = value(src, depth)
    try:
        pure.canonicalize(got)
    except (ajpcore.AjpError, TypeError, ValueError):
        return json_text(src)
    return got


def json_text(src: Bytes, limit: int = 24) -> str:
    """A ``_common.text`` with its lone surrogates replaced (a decoded card holds none)."""
    return text(src, limit).encode("utf-8", "replace").decode("utf-8")


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _card_of(src: Bytes) -> dict:
    card = {"name": "Agent", "description": "d", "version": "1", "capabilities": {"streaming": True},
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    for _ in range(src.byte() % 4):
        card[NAMES[src.byte() % len(NAMES)]] = json_value(src, 30)
    card.pop("signatures", None)
    return card


def _header(src: Bytes) -> str:
    if src.byte() & 1:
        return b64u(src.take(src.byte() % 64))
    header = {"alg": ALGS[src.byte() % len(ALGS)], "kid": KIDS[src.byte() % len(KIDS)]}
    flags = src.byte()
    if flags & 1:
        header["typ"] = ("JOSE", "JWT", None)[src.byte() % 3]
    if flags & 2:
        header["jku"] = (JKUS + (None, 1))[src.byte() % 4]
    if flags & 4:
        header["crit"] = (["b64"], [], ["x"], "b64")[src.byte() % 4]
    if flags & 8:
        header["b64"] = (True, False, None)[src.byte() % 3]
    if flags & 16:
        header[json_text(src, 6)] = json_value(src, 38)
    return b64u(pure.canonicalize(header))


def _entry(src: Bytes, card: dict):
    kind = src.byte() % 7
    kid, alg, key = KEYS[src.byte() % len(KEYS)]
    if kind <= 1:  # a real signature, of this card or of another one
        signed_over = card if kind == 0 else dict(card, name="Other")
        profile = a2a.PROFILES[src.byte() % len(a2a.PROFILES)]
        jku = JKUS[src.byte() % 2] if src.byte() & 1 else None
        return a2a.sign_card(signed_over, key, kid=kid, alg=alg, profile=profile, jku=jku)["signatures"][-1]
    if kind == 2:
        return {"protected": _header(src), "signature": b64u(src.take(src.byte() % 300))}
    if kind == 3:  # a real signature, flipped or cut
        entry = a2a.sign_card(card, key, kid=kid, alg=alg, profile="served")["signatures"][-1]  # any card: sign_card's default refuses unknown members
        raw = bytearray(base64.urlsafe_b64decode(entry["signature"] + "=="))
        at = src.byte() % len(raw)
        if src.byte() & 1:
            raw[at] ^= 1 << (src.byte() % 8)
        else:
            del raw[at:]
        return dict(entry, signature=b64u(bytes(raw)))
    if kind == 4:
        entry = a2a.sign_card(card, key, kid=kid, alg=alg, profile="served")["signatures"][-1]  # any card: sign_card's default refuses unknown members
        return dict(entry, header=value(src, 36) if src.byte() & 1 else {json_text(src, 6): "x"})
    if kind == 5:
        return {"protected": _header(src), "signature": value(src, 38)}
    return value(src, 36)


def _build(raw: bytes):
    src = Bytes(raw)
    card = _card_of(src)
    entries = [_entry(src, card) for _ in range(src.byte() % 12)]
    options = src.byte()
    if options & 1:
        card["signatures"] = entries
    else:
        card["signatures"] = value(src, 38) if options & 2 else entries
    keys = value(src, 36) if options & 4 and not options & 8 else JWKS
    kwargs = {"max_signatures": 1 + src.byte() % 12} if options & 16 else {}
    if options & 32:
        kwargs["profile"] = ((None,) + a2a.PROFILES)[src.byte() % 4]
    if options & 64:
        kwargs["algorithms"] = [ALGS[b % 4] for b in src.take(src.byte() % 3)]
    if options & 128:
        kwargs["allowed_jku"] = list(JKUS[: src.byte() % 3])
    return card, keys, kwargs


def _outcome(card, keys, kwargs, twin):
    saved = _core.impl
    _core.impl = twin
    _verifications[0] = 0
    try:
        got = a2a.verify_card(card, keys, **kwargs)
        result = ("ok", got.kid, got.alg, got.jku, got.profile, got.unsigned_members, got.payload,
                  tuple(repr(r) for r in got.signatures))
    except ajpcore.AjpError as exc:
        result = ("error", type(exc).__name__, str(exc))
    finally:
        _core.impl = saved
    cap = kwargs.get("max_signatures", _card.MAX_SIGNATURES)
    assert _verifications[0] <= cap * len(a2a.PROFILES), (_verifications[0], cap)
    return result


def check(raw: bytes, twin) -> None:
    card, keys, kwargs = _build(raw)
    want = _outcome(card, keys, kwargs, pure)
    got = want if twin is pure else _outcome(card, keys, kwargs, twin)
    same("verify_card", raw, got, want)


if __name__ == "__main__":
    fuzz_main(check)
