"""ajpcore's answers to the conformance cases, one checker per pack file.

Each checker takes a file's cases and returns ``(id, message)`` for every case whose
answer differs from the expectation.  The core calls go through ``_core.impl`` so the
twin in use is the one selected (tests switch it per run).
"""

from __future__ import annotations

import base64
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import _core, ajp
from ..errors import (
    AjpError,
    BadSignature,
    DecodeError,
    EncodeError,
    LegacySignature,
    MalformedSignature,
    UnsupportedScheme,
    WeakKey,
)
from ..signing import verify

Failures = List[Tuple[str, str]]

# The refusal kinds of canonical.json `error` and decode.json `reason`, read from ajpcore's reasons.
_KINDS = (
    ("byte order mark", "bom"),
    ("nesting deeper", "depth"),
    ("invalid UTF-8", "utf8"),
    ("lone surrogate", "lone_surrogate"),
    ("noncharacter", "noncharacter"),
    ("duplicate member name", "duplicate_name"),
    ("integer is not exactly representable", "unsafe_integer"),
    ("out of range for binary64", "number_range"),
)


def refusal_kind(exc: Exception) -> str:
    """The pack's name for the reason ajpcore refused a document (``syntax`` when no rule is named)."""
    reason = getattr(exc, "reason", str(exc))
    lowered = reason.lower()
    for text, kind in _KINDS:
        if text.lower() in lowered:
            return kind
    return "syntax"


def _short(data: Any, limit: int = 60) -> str:
    text = data if isinstance(data, str) else repr(data)
    return text if len(text) <= limit else text[:limit] + "..."


def _each(cases: List[Dict[str, Any]], answer: Callable[[Dict[str, Any]], Optional[str]]) -> Failures:
    """``(id, message)`` of every case ``answer`` finds wrong; an exception is that case's failure.

    ``load_pack`` has checked every field's type, so an exception here is ajpcore failing the
    case (exit 1), never a traceback.
    """
    failures: Failures = []
    for case in cases:
        try:
            message = answer(case)
        except Exception as exc:  # reported, with its kind, as the case's failure
            message = f"the runner failed on this case: {type(exc).__name__}: {exc}"
        if message is not None:
            failures.append((case["id"], message))
    return failures


def _canonical_answer(case: Dict[str, Any]) -> Optional[str]:
    impl = _core.impl
    got: Optional[str] = None
    kind = detail = ""
    try:
        got = impl.canonicalize(impl.decode(case["input"])).decode("utf-8")
    except (DecodeError, EncodeError) as exc:
        kind, detail = refusal_kind(exc), str(exc)
    if "error" in case:
        if got is not None:
            return f"expected refusal `{case['error']}`, got {_short(got)}"
        if kind != case["error"]:
            return f"expected refusal `{case['error']}`, refused as `{kind}`: {detail}"
    elif got is None:
        return f"expected {_short(case['canonical'])}, refused: {detail}"
    elif got != case["canonical"]:
        return f"expected {_short(case['canonical'])}, got {_short(got)}"
    return None


def check_canonical(cases: List[Dict[str, Any]]) -> Failures:
    """``input`` (JSON text) decoded strictly and canonicalized must give ``canonical``, or refuse with ``error``."""
    return _each(cases, _canonical_answer)


def _decode_answer(case: Dict[str, Any]) -> Optional[str]:
    data = base64.b64decode(case["input_b64"], validate=True)
    try:
        _core.impl.decode(data)
        verdict, kind, detail = "accept", None, ""
    except DecodeError as exc:
        verdict, kind, detail = "refuse", refusal_kind(exc), str(exc)
    if verdict != case["expect"]:
        return f"expected {case['expect']}, got {verdict} {detail}".rstrip()
    if verdict == "refuse" and "reason" in case and kind != case["reason"]:
        return f"expected refusal `{case['reason']}`, refused as `{kind}`: {detail}"
    return None


def check_decode(cases: List[Dict[str, Any]]) -> Failures:
    """``input_b64`` bytes must be accepted or refused (for the ``reason`` given) by the strict decoder."""
    return _each(cases, _decode_answer)


_VERDICTS = (
    (LegacySignature, "legacy"),
    (MalformedSignature, "malformed"),
    (UnsupportedScheme, "unsupported_scheme"),
    (BadSignature, "bad"),
    # A key the strict Ed25519 policy refuses (small order, non-canonical) verifies nothing.
    (WeakKey, "bad"),
)


def _credential(case: Dict[str, Any]) -> Dict[str, Any]:
    return {k: case[k] for k in ("secret", "public_key") if k in case}


def signature_verdict(case: Dict[str, Any]) -> str:
    """ajpcore's verdict on one signatures.json case: valid, bad, legacy, malformed or unsupported_scheme."""
    try:
        if "mode" in case:
            ajp.JobResult.from_dict(case["body"]).verify(mode=case["mode"], **_credential(case))
        else:
            verify(case["body"], **_credential(case))
    except (LegacySignature, MalformedSignature, UnsupportedScheme, BadSignature, WeakKey) as exc:
        return next(name for cls, name in _VERDICTS if isinstance(exc, cls))
    return "valid"


def check_signatures(cases: List[Dict[str, Any]]) -> Failures:
    """Each ``body`` checked with its ``secret`` or ``public_key`` (and ``mode`` for results) must give ``expect``."""
    failures: Failures = []
    for case in cases:
        try:
            got = signature_verdict(case)
        except Exception as exc:  # a case must end in a verdict; anything else is a failure to report
            got = f"{type(exc).__name__}: {exc}"
        if got != case["expect"]:
            failures.append((case["id"], f"expected {case['expect']}, got {got}"))
    return failures


def envelope_answer(case: Dict[str, Any], guard: ajp.MemoryReplayGuard) -> Tuple[int, Optional[str]]:
    """The HTTP status and error code ajpcore's receiver answers one envelopes.json message with."""
    try:
        ajp.receive_offer(base64.b64decode(case["message_b64"], validate=True), now=case["now"], replay_guard=guard, **_credential(case))
    except Exception as exc:
        status, body = ajp.error_response(exc)
        return status, body.code
    return 202, None


def check_envelopes(cases: List[Dict[str, Any]]) -> Failures:
    """Each message received (after the cases it ``follows``, by the same receiver) must get ``expect_status``."""
    by_id = {case["id"]: case for case in cases}

    def answer(case: Dict[str, Any]) -> Optional[str]:
        capacity = case.get("replay_capacity")
        guard = ajp.MemoryReplayGuard() if capacity is None else ajp.MemoryReplayGuard(max_entries=capacity)
        unknown = [cid for cid in case.get("follows", []) if cid not in by_id]
        if unknown:
            return f"follows unknown case `{unknown[0]}`"
        for earlier in case.get("follows", []):
            envelope_answer(by_id[earlier], guard)
        status, code = envelope_answer(case, guard)
        if status != case["expect_status"] or ("expect_code" in case and code != case["expect_code"]):
            want = f"{case['expect_status']} {case.get('expect_code', '')}".rstrip()
            return f"expected {want}, got {status} {code or ''}".rstrip()
        return None

    return _each(cases, answer)


# -- a2a.json: A2A Agent Card signatures --------------------------------------------------------

_A2A_KINDS = (
    ("UnsignedCard", "unsigned"),
    ("UnsupportedAlgorithm", "unsupported_algorithm"),
    ("UntrustedKey", "untrusted_key"),
    ("MalformedJws", "malformed"),
    ("MalformedCard", "malformed"),
    ("BadSignature", "bad"),
    ("KeyFormatError", "bad_key"),  # JwkError and WeakKey
)


def a2a_refusal_kind(exc: Exception) -> str:
    """The pack's name for an ``ajpcore.a2a`` refusal (``unsigned``, ``bad_key``, ...)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return next((kind for name, kind in _A2A_KINDS if name in names), type(exc).__name__)


def _a2a_answer(case: Dict[str, Any]) -> Tuple[str, Any]:
    from .. import a2a

    try:
        keys = a2a.KeySet.from_jwks(case["jwks_text"] if "jwks_text" in case else case["jwks"])
        if "card" not in case:
            return "valid", None
        result = a2a.verify_card(case["card"], keys, algorithms=case.get("algorithms"), profile=case.get("profile"),
                                 allowed_jku=case.get("allowed_jku"))
    except (AjpError, ValueError) as exc:
        return a2a_refusal_kind(exc), None
    return "valid", result


def check_a2a(cases: List[Dict[str, Any]]) -> Failures:
    """Payload cases: ``payloads``/``unsigned`` per profile; verify and key-set cases: ``expect``
    (and ``expect_profile``, ``expect_kid``, ``expect_unsigned`` for a valid card)."""
    failures: Failures = []
    for case in cases:
        try:
            failures.extend((case["id"], message) for message in _a2a_case_failures(case))
        except Exception as exc:  # reported, with its kind, as the case's failure
            failures.append((case["id"], f"the runner failed on this case: {type(exc).__name__}: {exc}"))
    return failures


def _a2a_case_failures(case: Dict[str, Any]) -> List[str]:
    """What differs in one a2a.json case (a payload case may differ in several profiles)."""
    from .. import a2a

    failures: List[str] = []
    if "payloads" in case:
        for profile, text in case["payloads"].items():
            got = a2a.payload(case["card"], profile).decode("utf-8")
            if got != text:
                failures.append(f"`{profile}` payload: expected {_short(text)}, got {_short(got)}")
            left_out = list(a2a._profiles.project(case["card"], profile)[1])
            if left_out != case["unsigned"][profile]:
                failures.append(f"`{profile}` leaves out {left_out}, expected {case['unsigned'][profile]}")
        return failures
    verdict, result = _a2a_answer(case)
    if verdict != case["expect"]:
        return [f"expected {case['expect']}, got {verdict}"]
    for field, attr in (("expect_profile", "profile"), ("expect_kid", "kid"), ("expect_unsigned", "unsigned_members")):
        if field in case and result is not None:
            got = getattr(result, attr)
            want = case[field] if field != "expect_unsigned" else tuple(case[field])
            if got != want:
                failures.append(f"expected {attr} {want!r}, got {got!r}")
    return failures
