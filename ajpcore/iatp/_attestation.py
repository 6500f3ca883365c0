"""IATP-001 section 5.2 attestations: the typed message and its verification."""

from __future__ import annotations

import datetime as _dt
import hmac
import re
from typing import Any, Mapping, Optional, Union

from ..errors import BadSignature, KeyFormatError, MalformedSignature, TrustRefused
from ._model import _Part, _parse_time


class Attestation(_Part):
    """An agent attestation (IATP-001 section 5.2): a control plane vouches for the
    code (``codebase_hash``) and configuration (``config_hash``) an agent runs,
    from ``timestamp`` until ``expires_at``.  Check it with ``verify_attestation``."""

    __slots__ = ()
    _SCHEMA = ("iatp-attestation",)

    agent_id: str
    codebase_hash: str
    config_hash: str
    signature: str
    signing_key_id: str
    timestamp: str
    expires_at: str




# ---------------------------------------------------------------------------
# Attestations (IATP-001 section 5.2)
# ---------------------------------------------------------------------------

# The reference joins the four fields with ":" although hashes ("sha256:...") and
# timestamps contain ":" too, so one byte string can stand for several
# attestations.  Requiring an agent_id without ":" and hashes of exactly one
# "<algorithm>:<digest>" makes the split unique again (the timestamp is last and
# strict RFC 3339); anything else is refused before the signature is checked.
_ATTESTED_HASH = re.compile(r"[a-z0-9-]+:[^:]+")


def attestation_signing_bytes(attestation: Attestation) -> bytes:
    """UTF-8 of ``agent_id:codebase_hash:config_hash:timestamp``: what the reference signs.

    Raises ``BadSignature`` when the fields would make that string ambiguous
    (``agent_id`` containing ``:``, a hash that is not one ``<algorithm>:<digest>``).
    """
    if ":" in attestation.agent_id:
        raise BadSignature("An attested `agent_id` must not contain `:` (the signed fields are `:`-joined) - at `$.agent_id`")
    for name in ("codebase_hash", "config_hash"):
        if _ATTESTED_HASH.fullmatch(getattr(attestation, name)) is None:
            raise BadSignature(f"Expected `<algorithm>:<digest>` with a single `:` - at `$.{name}`")
    text = f"{attestation.agent_id}:{attestation.codebase_hash}:{attestation.config_hash}:{attestation.timestamp}"
    return text.encode("utf-8")


ATTESTATION_MAX_AGE_SECONDS = 86_400
"""Default ``max_age`` of ``verify_attestation``: the one-day lifetime of IATP-001 section 5.2's example."""


def verify_attestation(
    attestation: Union[Attestation, Mapping[str, Any]],
    public_key: Any,
    *,
    now: Union[str, _dt.datetime],
    max_age: float = ATTESTATION_MAX_AGE_SECONDS,
    expected_codebase_hash: Optional[str] = None,
    expected_config_hash: Optional[str] = None,
    backend: Optional[str] = None,
) -> None:
    """Check an attestation as IATP-001 section 5.2 asks: signature, freshness, hashes.

    ``public_key`` is the control plane's key: an ``Ed25519PublicKey``, the
    reference's form (standard base64 of the 32 raw bytes) or any text form
    ``Ed25519PublicKey.from_string`` reads.  The signature is the standard,
    padded, canonical base64 of 64 bytes over ``attestation_signing_bytes``,
    which covers ``agent_id``, ``codebase_hash``, ``config_hash`` and
    ``timestamp`` only.

    Freshness therefore comes from the signed ``timestamp``: the attestation is
    valid from ``timestamp`` (included) for ``max_age`` seconds (excluded;
    default 86,400, a positive finite number).  ``expires_at`` is NOT covered by
    the signature (anyone can rewrite it), so it can only shorten that window,
    never extend it.

    Returns ``None`` when valid.  Raises ``MalformedSignature`` /
    ``BadSignature`` (401) for the signature, ``TrustRefused`` (403) when
    ``now`` is before ``timestamp``, at or after ``timestamp + max_age`` or at
    or after ``expires_at``, or a hash differs from the one expected;
    ``KeyFormatError`` for an unusable ``public_key``; ``ValidationError`` for
    an invalid dict or time; ``ValueError`` for a ``max_age`` that is not a
    positive finite number.
    """
    from ..keys import Ed25519PublicKey, _strict_b64decode

    if isinstance(max_age, bool) or not isinstance(max_age, (int, float)) or not 0 < max_age < float("inf"):
        raise ValueError(f"`max_age` must be a positive finite number of seconds, got {max_age!r}")

    typed = attestation if isinstance(attestation, Attestation) else Attestation.from_dict(attestation)
    key = public_key
    if not isinstance(key, Ed25519PublicKey):
        if isinstance(key, str) and len(key) == 44 and not key.startswith("ed25519:"):
            # The reference's raw form: standard base64 of the 32 key bytes.
            key = Ed25519PublicKey.from_bytes(_strict_b64decode(key, 32, "Ed25519 public key"))
        else:
            key = Ed25519PublicKey.from_string(key)
    try:
        raw = _strict_b64decode(typed.signature, 64, "Ed25519 signature")
    except KeyFormatError as exc:
        raise MalformedSignature(f"{exc} - at `$.signature`") from None
    key.verify(raw, attestation_signing_bytes(typed), backend=backend)
    current = _parse_time(now, "now")
    issued = _parse_time(typed.timestamp, "timestamp")
    expires = _parse_time(typed.expires_at, "expires_at")
    if current < issued:
        raise TrustRefused("The attestation is not valid yet (`timestamp` is after `now`)")
    age = current - issued
    if (age.days * 86_400 + age.seconds) * 1_000_000 + age.microseconds >= max_age * 1_000_000:
        raise TrustRefused(f"The attestation has expired: its signed `timestamp` is `max_age` ({max_age!r} s) or more before `now`")
    if current >= expires:
        raise TrustRefused("The attestation has expired (`expires_at`, which its signature does not cover, is not after `now`)")
    for name, expected in (("codebase_hash", expected_codebase_hash), ("config_hash", expected_config_hash)):
        if expected is not None and not hmac.compare_digest(getattr(typed, name).encode("utf-8"), expected.encode("utf-8")):
            raise TrustRefused(f"`{name}` is not the expected one: the agent does not run the attested code")
