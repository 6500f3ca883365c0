"""JWK public keys (RFC 7517, 7518 §6, 8037) read strictly, and the key set a verifier trusts.

Only public signature keys of three kinds: ``OKP`` with ``crv`` ``Ed25519`` (through
``ajpcore.keys``: canonical, not of small order), ``EC`` with ``crv`` ``P-256`` (``x`` and
``y`` of exactly 32 bytes, a point on the curve), ``RSA`` (``n`` and ``e`` without leading
zero octets, ``n`` of 2048 to 16384 bits, ``e`` odd from 3 to 2^32 - 1).  Every ``kid`` is a non-empty string, unique in its set.
``use`` (when present) must be ``sig``, ``key_ops`` must include ``verify``, and a JWK
``alg`` binds the key to that one algorithm.  A private member (``d``, ``p``, ``q``,
``dp``, ``dq``, ``qi``, ``oth``), a symmetric ``oct`` key, or any other ``kty``/``crv`` is
refused: ``JwkError`` (``WeakKey`` for an Ed25519 key the strict policy refuses).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Mapping, Optional, Tuple, Union

from cryptography.hazmat.primitives.asymmetric import ec, rsa

from .. import _core
from ..errors import DecodeError, JwkError, KeyFormatError, MalformedJws, WeakKey
from ..keys import Ed25519PrivateKey, Ed25519PublicKey
from ._jws import ALGORITHMS, KEY_TYPES, MAX_RSA_BITS, MAX_RSA_EXPONENT, MIN_RSA_BITS, PublicKey, b64url_decode, b64url_encode, own_ed25519

__all__ = ["KeySet", "TrustedKey", "jwk_from_key"]

_PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "oth", "k")


class TrustedKey:
    """One key of a ``KeySet``: ``kid``, ``kty`` (``OKP``, ``EC``, ``RSA``), the loaded public
    key (``Ed25519PublicKey`` or a ``cryptography`` key), and ``alg`` when its JWK pins one."""

    __slots__ = ("kid", "kty", "key", "alg")
    kid: str
    kty: str
    key: PublicKey
    alg: Optional[str]

    def __init__(self, kid: str, kty: str, key: PublicKey, alg: Optional[str]) -> None:
        object.__setattr__(self, "kid", kid)
        object.__setattr__(self, "kty", kty)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "alg", alg)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("`TrustedKey` is frozen")

    def __repr__(self) -> str:
        return f"TrustedKey(kid={self.kid!r}, kty={self.kty!r}, alg={self.alg!r})"


def _member_b64(jwk: Dict[str, Any], name: str, kid: str, size: Optional[int] = None) -> bytes:
    if name not in jwk:
        raise JwkError(f"JWK `{kid}` has no `{name}`")
    try:
        raw = b64url_decode(jwk[name], name)
    except MalformedJws as exc:
        raise JwkError(f"JWK `{kid}`: {exc}") from None
    if size is not None and len(raw) != size:
        raise JwkError(f"JWK `{kid}`: `{name}` must be {size} bytes, got {len(raw)}")
    return raw


def _unsigned_int(jwk: Dict[str, Any], name: str, kid: str) -> int:
    raw = _member_b64(jwk, name, kid)
    if not raw or raw[0] == 0:
        raise JwkError(f"JWK `{kid}`: `{name}` must use the minimum number of octets (RFC 7518 §6.3.1)")
    return int.from_bytes(raw, "big")


def _load(jwk: Any, position: int) -> TrustedKey:
    if not isinstance(jwk, dict):
        raise JwkError(f"JWKS key {position} must be a JSON object")
    kid = jwk.get("kid")
    if not isinstance(kid, str) or not kid:
        raise JwkError(f"JWKS key {position} has no `kid`: keys are selected by `kid`")
    private = [m for m in _PRIVATE_MEMBERS if m in jwk]
    kty = jwk.get("kty")
    if kty == "oct":
        raise JwkError(f"JWK `{kid}` is a symmetric key (`oct`): Agent Cards are verified with public keys only")
    if private:
        raise JwkError(f"JWK `{kid}` holds the private member `{private[0]}`: give public keys only")
    if kty not in ("OKP", "EC", "RSA"):
        raise JwkError(f"JWK `{kid}` has `kty` {_text(kty)}: expected `OKP`, `EC` or `RSA`")
    if "use" in jwk and jwk["use"] != "sig":
        raise JwkError(f"JWK `{kid}` has `use` {_text(jwk['use'])}: a card key must be for `sig`")
    if "key_ops" in jwk:
        ops = jwk["key_ops"]
        if not isinstance(ops, list) or not all(isinstance(o, str) for o in ops) or "verify" not in ops:
            raise JwkError(f"JWK `{kid}` has `key_ops` without `verify`")
    alg = jwk.get("alg")
    if alg is not None:
        if alg not in ALGORITHMS or KEY_TYPES[alg] != kty:
            raise JwkError(f"JWK `{kid}` has `alg` {_text(alg)}, not a signature algorithm for a `{kty}` key")
    key: PublicKey
    crv = jwk.get("crv")
    if kty == "OKP":
        if crv != "Ed25519":
            raise JwkError(f"JWK `{kid}` has `crv` {_text(crv)}: an OKP key must be `Ed25519`")
        x = _member_b64(jwk, "x", kid, 32)
        try:
            key = Ed25519PublicKey.from_bytes(x)
        except WeakKey as exc:
            raise WeakKey(f"JWK `{kid}`: {exc}") from None
    elif kty == "EC":
        if crv != "P-256":
            raise JwkError(f"JWK `{kid}` has `crv` {_text(crv)}: an EC key must be `P-256`")
        x = _member_b64(jwk, "x", kid, 32)
        y = _member_b64(jwk, "y", kid, 32)
        try:
            key = ec.EllipticCurvePublicNumbers(int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1()).public_key()
        except ValueError:
            raise JwkError(f"JWK `{kid}`: (x, y) is not a point of P-256") from None
    else:
        n = _unsigned_int(jwk, "n", kid)
        e = _unsigned_int(jwk, "e", kid)
        if not MIN_RSA_BITS <= n.bit_length() <= MAX_RSA_BITS:
            raise JwkError(f"JWK `{kid}`: RSA modulus of {n.bit_length()} bits (expected {MIN_RSA_BITS} to {MAX_RSA_BITS})")
        if e % 2 == 0 or not 3 <= e <= MAX_RSA_EXPONENT:
            # RFC 8017 §3.1 allows any odd e < n; a verification costs O(log e) multiplications, so a
            # 3,072-bit e made each bogus RS256 signature ~200 times dearer.  No real key needs one.
            raise JwkError(f"JWK `{kid}`: RSA public exponent of {e.bit_length()} bits (expected an odd e from 3 to 2^32 - 1)")
        try:
            key = rsa.RSAPublicNumbers(e, n).public_key()
        except ValueError as exc:
            raise JwkError(f"JWK `{kid}`: not an RSA public key ({exc})") from None
    return TrustedKey(kid, kty, key, alg)


def _text(value: Any) -> str:
    return f"`{value}`" if isinstance(value, str) else ("none" if value is None else f"of JSON type {type(value).__name__}")


class KeySet:
    """The public keys a verifier trusts, by ``kid``.  Immutable; build with ``from_jwks``.

    ``len(keys)``, ``kid in keys``, ``keys[kid]`` (a ``TrustedKey``; ``KeyError`` when
    absent), ``keys.get(kid)``, ``keys.kids`` (in document order), iteration over the
    ``TrustedKey`` values.
    """

    __slots__ = ("_keys",)
    _keys: Dict[str, TrustedKey]

    def __init__(self, keys: Tuple[TrustedKey, ...] = (), _token: object = None) -> None:
        if _token is not _CONSTRUCT:
            raise JwkError("use KeySet.from_jwks(document)")
        object.__setattr__(self, "_keys", {k.kid: k for k in keys})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("`KeySet` is frozen")

    @classmethod
    def from_jwks(cls, jwks: Union[bytes, bytearray, memoryview, str, Mapping[str, Any]]) -> "KeySet":
        """Read a JWKS document ``{"keys": [JWK, ...]}`` (RFC 7517 §5) of public signature keys.

        ``jwks``: the document as bytes or str (parsed with ajpcore's strict decoder:
        I-JSON, duplicate names refused) or already decoded (a dict).  Members other
        than ``keys``, and JWK members ajpcore does not use (``x5c``, ``x5u``...), are
        ignored: no key is ever fetched.  Raises ``JwkError`` for a document or key the
        module docstring's rules refuse (a ``kid`` twice included), ``WeakKey`` for a
        refused Ed25519 key.
        """
        if isinstance(jwks, (bytes, bytearray, memoryview, str)):
            try:
                doc = _core.impl.decode(jwks)
            except DecodeError as exc:
                raise JwkError(f"JWKS is not strict JSON: {exc}") from None
        else:
            doc = jwks
        if not isinstance(doc, Mapping) or not isinstance(doc.get("keys"), list):
            raise JwkError('a JWKS document is a JSON object {"keys": [...]} (RFC 7517 §5)')
        loaded = []
        seen = set()
        for position, jwk in enumerate(doc["keys"]):
            key = _load(jwk, position)
            if key.kid in seen:
                raise JwkError(f"JWKS has `kid` `{key.kid}` twice: a `kid` must select one key")
            seen.add(key.kid)
            loaded.append(key)
        return cls(tuple(loaded), _CONSTRUCT)

    @property
    def kids(self) -> Tuple[str, ...]:
        return tuple(self._keys)

    def get(self, kid: str) -> Optional[TrustedKey]:
        return self._keys.get(kid)

    def __getitem__(self, kid: str) -> TrustedKey:
        return self._keys[kid]

    def __contains__(self, kid: object) -> bool:
        return kid in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[TrustedKey]:
        return iter(self._keys.values())

    def __repr__(self) -> str:
        return f"KeySet(kids={self.kids!r})"


_CONSTRUCT = object()


def jwk_from_key(key: Any, *, kid: str, alg: Optional[str] = None) -> Dict[str, Any]:
    """The public JWK of ``key`` with ``kid`` (and ``alg`` when given): what a JWKS publishes.

    ``key``: an ``Ed25519PublicKey``/``Ed25519PrivateKey`` (ajpcore's or ``cryptography``'s),
    or a ``cryptography`` P-256 or RSA key, public or private (only the public half is written).  Raises
    ``JwkError`` for another key type, an empty ``kid``, or an ``alg`` that does not fit.
    """
    if not isinstance(kid, str) or not kid:
        raise JwkError("a JWK needs a non-empty string `kid`")
    key = own_ed25519(key)
    if isinstance(key, Ed25519PrivateKey):
        key = key.public_key
    elif isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)):
        key = key.public_key()
    jwk: Dict[str, Any]
    if isinstance(key, Ed25519PublicKey):
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64url_encode(key.raw)}
    elif isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
        numbers = key.public_numbers()
        jwk = {"kty": "EC", "crv": "P-256", "x": b64url_encode(numbers.x.to_bytes(32, "big")), "y": b64url_encode(numbers.y.to_bytes(32, "big"))}
    elif isinstance(key, rsa.RSAPublicKey):
        rsa_numbers = key.public_numbers()
        jwk = {"kty": "RSA", "n": _uint(rsa_numbers.n), "e": _uint(rsa_numbers.e)}
    else:
        raise JwkError(f"no JWK for `{type(key).__name__}` (expected Ed25519, P-256 or RSA)")
    if alg is not None:
        if alg not in ALGORITHMS or KEY_TYPES[alg] != jwk["kty"]:
            raise JwkError(f"`alg` `{alg}` does not fit a `{jwk['kty']}` key")
        jwk["alg"] = alg
    jwk["kid"] = kid
    jwk["use"] = "sig"
    try:
        _load(jwk, 0)  # the JWK this module writes is one it reads back (RSA size, curve point)
    except KeyFormatError as exc:
        raise JwkError(str(exc)) from None
    return jwk


def _uint(n: int) -> str:
    return b64url_encode(n.to_bytes((n.bit_length() + 7) // 8, "big"))
