"""Sign an Agent Card, and verify one against keys the caller trusts (A2A v1.0 §8.4)."""

from __future__ import annotations

from typing import Any, Collection, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from .. import _core
from .._jsoncopy import copy_json
from ..errors import (
    BadSignature,
    KeyUsageError,
    MalformedCard,
    MalformedJws,
    SignatureError,
    UnsignedCard,
    UnsupportedAlgorithm,
    UntrustedKey,
)
from ._jwk import KeySet
from ._jws import ALGORITHMS, KEY_TYPES, check_shape, PrivateKey, b64url_decode, b64url_encode, encoded_sign_input, parse_protected, sign_input, signature_bytes, verify_signature
from ._profiles import DEFAULT_PROFILES, PROFILES, project, valued_members

__all__ = ["sign_card", "verify_card", "VerifiedCard", "SignatureReport", "MAX_SIGNATURES"]

CardInput = Union[bytes, bytearray, memoryview, str, Mapping[str, Any]]


def _card_object(card: CardInput) -> Dict[str, Any]:
    if isinstance(card, (bytes, bytearray, memoryview, str)):
        card = _core.impl.decode(card)
    if not isinstance(card, dict):
        raise MalformedCard("an Agent Card must be a JSON object")
    return card


def _signature_list(card: Dict[str, Any]) -> List[Any]:
    entries = card.get("signatures", [])
    if not isinstance(entries, list):
        raise MalformedCard("`signatures` must be an array of AgentCardSignature objects")
    return entries


def sign_card(
    card: CardInput,
    private_key: PrivateKey,
    *,
    kid: str,
    alg: str,
    jku: Optional[str] = None,
    profile: Optional[str] = None,
) -> Dict[str, Any]:
    """The card with one more ``AgentCardSignature`` in ``signatures`` (a new dict; ``card`` is untouched).

    The protected header is ``{"alg", "kid", "typ": "JOSE"}`` plus ``jku`` when given,
    written as RFC 8785 JSON and base64url; the payload is the card under ``profile``.
    The default (None) follows A2A §8.4.1 as both SDKs read it: the card without its
    default and empty values (the ``sdk`` payload; for a card without empty values it
    is the ``spec`` payload byte for byte), so the signature verifies in ajpcore,
    a2a-python and @a2a-js/sdk alike.  A card with a member that reading drops although
    it holds a value (a member the A2A proto does not know, a proto field under both
    its names) is refused, since that member would travel unsigned: remove it, or name
    a profile (``served``, ``spec``, ``sdk``; see ``payload``) to sign it anyway.
    ``card``: a dict, or JSON bytes/str (strictly decoded).  ``private_key``: an
    ``Ed25519PrivateKey`` (ajpcore's or ``cryptography``'s; ``EdDSA``), or a
    ``cryptography`` P-256 key (``ES256``) or RSA key of 2048 to 16384 bits
    (``RS256``, ``PS256``).

    Raises ``UnsupportedAlgorithm`` for another ``alg`` or a key that does not fit it,
    ``KeyUsageError`` for an empty ``kid``, a non-string ``jku``, an unknown profile or,
    under the default profile, a member that would go unsigned (named by its JSON
    Pointer), ``MalformedCard`` when ``signatures`` is not an array, ``DecodeError``
    for bytes that are not strict JSON, ``EncodeError`` for a value without canonical JSON.
    """
    body = _card_object(card)
    if not isinstance(kid, str) or not kid:
        raise KeyUsageError("`kid` must be a non-empty string")
    if jku is not None and not isinstance(jku, str):
        raise KeyUsageError("`jku` must be a string URL or None")
    if alg not in ALGORITHMS:
        signature_bytes(alg, private_key, b"")  # raises the UnsupportedAlgorithm that names why
    entries = _signature_list(body)
    header: Dict[str, Any] = {"alg": alg, "kid": kid, "typ": "JOSE"}
    if jku is not None:
        header["jku"] = jku
    protected = b64url_encode(_core.impl.canonicalize(header))
    covered, left_out = project(body, "sdk" if profile is None else profile)
    if profile is None:
        valued = valued_members(body, left_out)
        if valued:
            raise KeyUsageError(
                f"`{valued[0]}` holds a value the A2A SDKs drop before checking a signature (a member the proto "
                f"does not know, or a field under both its names), so it would travel unsigned; remove it, "
                f"or pass profile='served' (or 'spec') to sign it where only ajpcore verifies"
                + (f" ({len(valued)} such members: {' '.join(valued)})" if len(valued) > 1 else ""))
    data = sign_input(protected, _core.impl.canonicalize(covered))
    signature = b64url_encode(signature_bytes(alg, private_key, data))
    signed: Dict[str, Any] = copy_json(body)
    signed["signatures"] = [*copy_json(entries), {"protected": protected, "signature": signature}]
    return signed


class SignatureReport:
    """What became of one entry of ``signatures``: ``index``, ``kid``, ``alg`` and ``jku`` (None
    when unreadable), ``valid``, the ``profile`` it verified under (None when it did not),
    and for a refusal the ``error`` class name, its ``code`` and ``reason``."""

    __slots__ = ("index", "kid", "alg", "jku", "valid", "profile", "error", "code", "reason")
    index: int
    kid: Optional[str]
    alg: Optional[str]
    jku: Optional[str]
    valid: bool
    profile: Optional[str]
    error: Optional[str]
    code: Optional[str]
    reason: Optional[str]

    def __init__(self, index: int, header: Dict[str, Any], profile: Optional[str], exc: Optional[SignatureError]) -> None:
        values = {
            "index": index,
            "kid": _str_or_none(header.get("kid")),
            "alg": _str_or_none(header.get("alg")),
            "jku": _str_or_none(header.get("jku")),
            "valid": exc is None,
            "profile": profile,
            "error": None if exc is None else type(exc).__name__,
            "code": None if exc is None else exc.code,
            "reason": None if exc is None else str(exc),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("`SignatureReport` is frozen")

    def __repr__(self) -> str:
        if self.valid:
            return f"SignatureReport(index={self.index}, kid={self.kid!r}, alg={self.alg!r}, valid=True, profile={self.profile!r})"
        return f"SignatureReport(index={self.index}, kid={self.kid!r}, alg={self.alg!r}, valid=False, error={self.error!r}, reason={self.reason!r})"


def _str_or_none(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


class VerifiedCard:
    """What ``verify_card`` vouches for: the members the verified signature covers, and nothing else.

    - ``kid``, ``alg``, ``jku``: the protected header of the signature that verified (the
      first in card order among those of the safest profile that verified).
    - ``profile``: the canonicalization it verified under (``served``, ``spec``, ``sdk``).
    - ``unsigned_members``: every received member the signature does not cover, as RFC
      6901 JSON Pointers in card order (a container's pointer stands for its subtree);
      ``()`` under ``served``.  ``/signatures`` itself is never covered and not listed.
    - ``signatures``: a ``SignatureReport`` per entry of ``signatures``, in card order.
    - ``to_dict()``: the card as signed (only covered members; a fresh copy), the same
      view as ``card["name"]``, ``card.get("skills")`` and ``"iconUrl" in card``, so an
      uncovered member cannot be read as signed by accident;
      ``to_dict(include_unsigned=True)``: the whole card as received, a fresh copy.
    - ``payload``: the exact bytes the signature covers (RFC 8785).
    """

    __slots__ = ("kid", "alg", "jku", "profile", "unsigned_members", "signatures", "payload", "_covered", "_received")
    kid: str
    alg: str
    jku: Optional[str]
    profile: str
    unsigned_members: Tuple[str, ...]
    signatures: Tuple[SignatureReport, ...]
    payload: bytes
    _covered: Dict[str, Any]
    _received: Dict[str, Any]

    def __init__(self, winner: SignatureReport, covered: Dict[str, Any], left_out: Tuple[str, ...], data: bytes,
                 reports: Tuple[SignatureReport, ...], received: Dict[str, Any]) -> None:
        assert winner.kid is not None and winner.alg is not None and winner.profile is not None
        values = {"kid": winner.kid, "alg": winner.alg, "jku": winner.jku, "profile": winner.profile,
                  "unsigned_members": left_out, "signatures": reports, "payload": data,
                  "_covered": covered, "_received": received}
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("`VerifiedCard` is frozen")

    def __repr__(self) -> str:
        return (f"VerifiedCard(kid={self.kid!r}, alg={self.alg!r}, profile={self.profile!r}, "
                f"unsigned_members={self.unsigned_members!r})")

    def to_dict(self, *, include_unsigned: bool = False) -> Dict[str, Any]:
        """The covered members only (default), or the whole received card; a fresh JSON value."""
        whole: Dict[str, Any] = copy_json(self._received if include_unsigned else self._covered)
        return whole

    def __getitem__(self, name: str) -> Any:
        """A covered top-level member, as signed (a fresh copy); ``KeyError`` when not covered."""
        return copy_json(self._covered[name])

    def get(self, name: str, default: Any = None) -> Any:
        """A covered top-level member (a fresh copy), or ``default`` when it is not covered."""
        return copy_json(self._covered[name]) if name in self._covered else default

    def __contains__(self, name: object) -> bool:
        return name in self._covered


def _algorithm_list(algorithms: Optional[Iterable[str]]) -> Tuple[str, ...]:
    if algorithms is None:
        return ALGORITHMS
    if isinstance(algorithms, str):
        raise KeyUsageError("`algorithms` is a collection of names, e.g. ['EdDSA', 'ES256'], not one string")
    chosen = tuple(algorithms)
    for alg in chosen:
        if alg not in ALGORITHMS:
            raise KeyUsageError(f"`algorithms` names `{alg}`: ajpcore verifies cards only with {', '.join(ALGORITHMS)}")
    return chosen


def _profile_list(profile: Optional[str]) -> Tuple[str, ...]:
    if profile is None:
        return DEFAULT_PROFILES
    if profile not in PROFILES:
        raise KeyUsageError(f"unknown canonicalization profile `{profile}` (expected one of `served`, `spec`, `sdk`)")
    return (profile,)


class _Payloads:
    """Each profile's covered card, left-out pointers and bytes, computed once and only when needed;
    and the bytes in base64url (``encoded``), also once, however many signatures are checked."""

    def __init__(self, card: Dict[str, Any]) -> None:
        self._card = card
        self._done: Dict[str, Tuple[Dict[str, Any], Tuple[str, ...], bytes]] = {}
        self._encoded: Dict[str, str] = {}

    def __call__(self, profile: str) -> Tuple[Dict[str, Any], Tuple[str, ...], bytes]:
        got = self._done.get(profile)
        if got is None:
            covered, left_out = project(self._card, profile)
            got = self._done[profile] = (covered, left_out, _core.impl.canonicalize(covered))
        return got

    def encoded(self, profile: str) -> str:
        text = self._encoded.get(profile)
        if text is None:
            text = self._encoded[profile] = b64url_encode(self(profile)[2])
        return text


def _check_entry(entry: Any, keys: KeySet, algorithms: Tuple[str, ...], allowed_jku: Optional[Collection[str]],
                 header_out: Dict[str, Any]) -> Tuple[Any, str, bytes]:
    """The trusted key, the protected text and the signature bytes of one entry, or a SignatureError."""
    if not isinstance(entry, dict):
        raise MalformedJws("a `signatures` entry must be a JSON object")
    protected, signature = entry.get("protected"), entry.get("signature")
    if not isinstance(protected, str) or not isinstance(signature, str):
        raise MalformedJws("a `signatures` entry needs string `protected` and `signature` members")
    header = parse_protected(protected)
    header_out.update(header)
    if "header" in entry:
        unprotected = entry["header"]
        if not isinstance(unprotected, dict):
            raise MalformedJws("`header` (the unprotected JWS header) must be a JSON object")
        shared = [name for name in unprotected if name in header]
        if shared:
            raise MalformedJws(f"`{shared[0]}` is in both the protected and the unprotected header (RFC 7515 §7.2.1)")
        if "crit" in unprotected:
            raise MalformedJws("`crit` must be integrity protected (RFC 7515 §4.1.11)")
    alg, kid = header["alg"], header["kid"]
    if alg not in algorithms:
        raise UnsupportedAlgorithm(f"`alg` `{alg}` is not among the algorithms allowed here ({', '.join(algorithms)})")
    jku = header.get("jku")
    if jku is not None and allowed_jku is not None and jku not in allowed_jku:
        raise UntrustedKey(f"`jku` `{jku}` is not in the allowed list: the signer does not choose the trust root")
    trusted = keys.get(kid)
    if trusted is None:
        raise UntrustedKey(f"`kid` `{kid}` is not in the trusted key set")
    if trusted.alg is not None and trusted.alg != alg:
        raise UnsupportedAlgorithm(f"key `{kid}` is for `{trusted.alg}` only, the signature says `{alg}`")
    if KEY_TYPES[alg] != trusted.kty:
        raise UnsupportedAlgorithm(f"`alg` `{alg}` needs a {KEY_TYPES[alg]} key; key `{kid}` is {trusted.kty}")
    raw = b64url_decode(signature, "signature")
    check_shape(alg, trusted.key, raw)
    return trusted.key, protected, raw


_SEVERITY = (BadSignature, MalformedJws, UnsupportedAlgorithm, UntrustedKey)


MAX_SIGNATURES = 8
"""``verify_card``'s default ``max_signatures``: a card carries one signature per signer, rarely more than two."""


def _signature_cap(max_signatures: int) -> int:
    if isinstance(max_signatures, bool) or not isinstance(max_signatures, int) or max_signatures < 1:
        raise KeyUsageError("`max_signatures` must be an int >= 1")
    return max_signatures


def _verified_profile(alg: str, key: Any, protected: str, signature: bytes, profiles: Tuple[str, ...],
                      payloads: _Payloads) -> Optional[str]:
    """The first of ``profiles`` whose payload the signature verifies, else None.

    A profile whose payload bytes equal one already tried is not verified again (the same
    bytes give the same answer): a card without empty values, default-valued fields or
    members outside the proto costs one verification per signature, not one per profile.
    """
    tried: List[bytes] = []
    for name in profiles:
        data = payloads(name)[2]
        if data in tried:
            continue
        tried.append(data)
        try:
            verify_signature(alg, key, signature, encoded_sign_input(protected, payloads.encoded(name)))
        except BadSignature:
            continue
        return name
    return None


def verify_card(
    card: CardInput,
    keys: Union[KeySet, bytes, str, Mapping[str, Any]],
    *,
    algorithms: Optional[Iterable[str]] = None,
    profile: Optional[str] = None,
    allowed_jku: Optional[Collection[str]] = None,
    max_signatures: int = MAX_SIGNATURES,
) -> VerifiedCard:
    """Verify an Agent Card's signatures against keys the caller trusts; any one valid suffices.

    ``card``: the card as received (bytes or str, read with ajpcore's strict decoder) or
    decoded (a dict).  ``keys``: a ``KeySet``, or a JWKS document ``KeySet.from_jwks``
    reads.  Keys are selected by the protected ``kid``, never fetched from ``jku``.
    ``algorithms``: the ``alg`` values allowed (default: ``EdDSA``, ``ES256``, ``RS256``,
    ``PS256``).  ``profile``: ``served``, ``spec`` or ``sdk`` to accept that
    canonicalization only; None tries them in that order (safest first) and reports the
    first that verifies.  ``allowed_jku``: when given, a signature whose protected ``jku``
    is not in it is refused.  ``max_signatures`` (default 8): a card with more entries in
    ``signatures`` is refused before any is verified, so the work is bounded: at most
    ``max_signatures`` x one verification x the profiles tried (a profile whose payload
    bytes equal one already tried is not verified again).

    Returns a ``VerifiedCard``.  Raises, when no signature verifies, the most telling
    refusal among them (``BadSignature``, ``MalformedJws``, ``UnsupportedAlgorithm``,
    ``UntrustedKey``), whose ``.reports`` holds every ``SignatureReport``;
    ``UnsignedCard`` for no signature at all, ``MalformedCard`` for a card that is not an
    object, whose ``signatures`` is not an array or holds more than ``max_signatures``
    entries; ``DecodeError`` for bytes that are not strict JSON; ``KeyUsageError`` for an
    unknown profile or algorithm name or a ``max_signatures`` that is not an int >= 1;
    ``JwkError`` for a JWKS document ``keys`` that ``KeySet.from_jwks`` refuses.
    """
    body = _card_object(card)
    key_set = keys if isinstance(keys, KeySet) else KeySet.from_jwks(keys)
    allowed = _algorithm_list(algorithms)
    profiles = _profile_list(profile)
    if allowed_jku is not None and isinstance(allowed_jku, str):
        raise KeyUsageError("`allowed_jku` is a collection of URLs, not one string")
    cap = _signature_cap(max_signatures)
    entries = _signature_list(body)
    if not entries:
        raise UnsignedCard("the Agent Card has no signature")
    if len(entries) > cap:
        raise MalformedCard(
            f"the Agent Card carries {len(entries)} signatures; at most {cap} are verified (`max_signatures`)"
        )
    payloads = _Payloads(body)
    reports: List[SignatureReport] = []
    failures: List[SignatureError] = []
    for index, entry in enumerate(entries):
        header: Dict[str, Any] = {}
        try:
            key, protected, signature = _check_entry(entry, key_set, allowed, allowed_jku, header)
            verified = _verified_profile(header["alg"], key, protected, signature, profiles, payloads)
            if verified is None:
                tried = ", ".join(f"`{p}`" for p in profiles)
                raise BadSignature(f"{header['alg']} signature does not match the card under {tried} and key `{header['kid']}`")
            reports.append(SignatureReport(index, header, verified, None))
        except SignatureError as exc:
            reports.append(SignatureReport(index, header, None, exc))
            failures.append(exc)
    done = tuple(reports)
    valid = [r for r in done if r.valid]
    if not valid:
        raise _refusal(failures, done)
    winner = min(valid, key=lambda r: (PROFILES.index(r.profile or ""), r.index))
    covered, left_out, data = payloads(winner.profile or "")
    return VerifiedCard(winner, covered, left_out, data, done, body)


def _refusal(failures: List[SignatureError], reports: Tuple[SignatureReport, ...]) -> SignatureError:
    rank = [next((i for i, cls in enumerate(_SEVERITY) if isinstance(exc, cls)), len(_SEVERITY)) for exc in failures]
    worst = failures[rank.index(min(rank))]
    if len(reports) == 1:
        message = str(worst)
    else:
        message = "no signature verified: " + "; ".join(
            f"[{r.index}] {'kid `' + r.kid + '`: ' if r.kid else ''}{r.reason}" for r in reports)
    error = type(worst)(message)
    setattr(error, "reports", reports)
    return error
