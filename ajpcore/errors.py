"""Every ajpcore exception, defined once.

Each class also inherits the builtin a caller would expect (``TypeError`` for
values that cannot be encoded, ``ValueError`` for bytes that cannot be read), so
``except ValueError`` keeps working in code that does not know ajpcore.  A
protocol error knows the HTTP status a server should answer with (``.status``)
and the machine-readable code of the AJP error body (``.code``).
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii as _quote
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

__all__ = [
    "AjpError",
    "EncodeError",
    "DecodeError",
    "ValidationError",
    "SignatureError",
    "BadSignature",
    "MalformedSignature",
    "UnsupportedScheme",
    "LegacySignature",
    "KeyFormatError",
    "WeakKey",
    "SignerFinalized",
    "format_path",
]


class AjpError(Exception):
    """Base class of every error ajpcore raises on purpose."""

    status: int = 400
    code: str = "BAD_REQUEST"

    def error_body(self) -> Dict[str, Any]:
        """The AJP ``ErrorBody`` a server answers this refusal with, as a JSON object.

        One definition for every error: ``_answer`` below, which
        ``ajpcore.ajp.error_response`` (status and ``ErrorBody``) also answers with.
        """
        return _answer(self, "JobOffer")[1]


# The AJP answer to a refusal (AJP §"Errors"): each error's ``status`` and ``code`` above
# pick it; the titles are the ``error`` member of the ``ErrorBody`` per status.
_TITLES = {400: "Invalid JobOffer", 401: "Invalid signature", 402: "Budget refused",
           403: "Sender identity could not be established", 404: "Job not found", 409: "Duplicate job",
           413: "Payload too large", 415: "Unsupported media type", 429: "Too many requests",
           503: "Service unavailable"}


def _answer(exc: BaseException, message: str) -> Tuple[int, Dict[str, Any]]:
    """The HTTP status and ``ErrorBody`` members that answer ``exc`` (the refused ``message`` names 400s).

    The rules are ``ajpcore.ajp.error_response``'s (its docstring states them);
    they live here, beside the statuses and codes they read, so this module
    imports nothing of ajpcore and the protocol layer builds on it.
    """
    invalid = f"Invalid {message}"
    if isinstance(exc, Busy):
        return 429, {"error": _TITLES[429], "code": exc.code, "reason": _line(str(exc)), "retry_after": exc.retry_after}
    if isinstance(exc, InvalidMessage):
        lines = list(exc.errors)
        return 400, {"error": invalid, "code": exc.code, "reason": _summary(lines), "errors": lines}
    if isinstance(exc, ValidationError):
        lines = [f"{reason} - at `{path}`" for path, reason in exc.errors]
        return 400, {"error": invalid, "code": exc.code, "reason": _summary(lines), "errors": lines}
    if isinstance(exc, DecodeError):
        lines = [str(exc)]
        return 400, {"error": invalid, "code": exc.code, "reason": _summary(lines), "errors": lines}
    if isinstance(exc, RecipientMismatch):
        return 403, {"error": "Offer addressed to another agent", "code": exc.code, "reason": _line(str(exc))}
    if isinstance(exc, DeclarationUnreachable):  # the fetch failure's own text stays with the host (its log)
        return 403, {"error": _TITLES[403], "code": exc.code, "reason": _UNREACHABLE_REASON}
    if isinstance(exc, StateUnavailable):
        reason = "the receiver cannot reach its replay or key-pin store; retry later"
        return 503, {"error": _TITLES[503], "code": exc.code, "reason": reason, "retry_after": exc.retry_after}
    if isinstance(exc, JobInProgress):
        return 503, {"error": _TITLES[503], "code": exc.code, "reason": _line(str(exc)), "retry_after": exc.retry_after}
    if isinstance(exc, AjpError) and exc.status in _TITLES:
        title = invalid if exc.status == 400 else _TITLES[exc.status]
        return exc.status, {"error": title, "code": exc.code, "reason": _line(str(exc))}
    if isinstance(exc, AjpError) and 400 <= exc.status < 500:
        return exc.status, {"error": "Request refused", "code": exc.code, "reason": _line(str(exc))}
    return 500, {"error": "Internal error", "reason": "the receiver failed; nothing about the request is known"}


_UNREACHABLE_REASON = "the sender's declaration could not be fetched from its declaration_url; retry later"
_REASON_CHARS = 300
"""The longest ``reason``: one line a person reads (the ``errors`` list, when there is one, has every problem)."""


def _line(text: str) -> str:
    """``text`` as one line of at most ``_REASON_CHARS`` characters (line breaks as spaces; cut with "...")."""
    line = " ".join(text.split())
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 3] + "..."


def _summary(lines: List[str]) -> str:
    """The ``reason`` of a 400: its first problem, and how many more ``errors`` lists."""
    if not lines:
        return "the message is not well formed"
    first = _line(lines[0])
    more = len(lines) - 1
    if not more:
        return first
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})"
    return first[: _REASON_CHARS - len(suffix)] + suffix


class EncodeError(AjpError, TypeError):
    """A Python value has no canonical JSON form.

    ``.path`` is the JSON path of the offending value (``$.a[3].b``), also named
    in the message.
    """

    code = "ENCODE_ERROR"

    def __init__(self, reason: str, path: str = "$") -> None:
        self.reason = reason
        self.path = path
        super().__init__(f"{reason} - at `{path}`")


class DecodeError(AjpError, ValueError):
    """Bytes are not one strictly valid I-JSON document.

    ``.pos`` is the byte offset of the problem (for ``str`` input, the offset in
    its UTF-8 encoding), ``.lineno``/``.colno`` are 1-based, ``.pointer`` is the
    RFC 6901 JSON Pointer of the innermost enclosing container ("" at top level).
    """

    code = "MALFORMED"

    def __init__(
        self,
        reason: str,
        pos: int = 0,
        lineno: int = 1,
        colno: int = 1,
        pointer: str = "",
    ) -> None:
        self.reason = reason
        self.pos = pos
        self.lineno = lineno
        self.colno = colno
        self.pointer = pointer
        ValueError.__init__(self, f"JSON is malformed: {reason} (byte {pos})")

    def __reduce__(self) -> Any:
        return (type(self), (self.reason, self.pos, self.lineno, self.colno, self.pointer))


class ValidationError(DecodeError):
    """A decoded value does not have the shape an envelope requires.

    ``.errors`` lists every problem found as ``(path, reason)`` pairs; ``.path``
    is the first one's path.  Each line of the message reads
    ``<reason> - at `<path>```.
    """

    code = "VALIDATION_ERROR"

    def __init__(self, errors: Sequence[Tuple[str, str]]) -> None:
        if not errors:
            raise ValueError("ValidationError needs at least one problem")
        self.errors = list(errors)
        self.path = self.errors[0][0]
        self.reason = self.errors[0][1]
        self.pos = 0
        self.lineno = 1
        self.colno = 1
        self.pointer = ""
        ValueError.__init__(
            self, "\n".join(f"{reason} - at `{path}`" for path, reason in self.errors)
        )

    def __reduce__(self) -> Any:
        return (type(self), (self.errors,))


class SignatureError(AjpError):
    """Base class of every signature refusal (HTTP 401)."""

    status = 401
    code = "BAD_SIGNATURE"


class BadSignature(SignatureError):
    """The signature is well formed but does not match the body and key."""


class MalformedSignature(SignatureError):
    """The signature string is not exactly ``sha256:<64 hex>`` or ``ed25519:<88 base64>``."""

    code = "MALFORMED_SIGNATURE"


class UnsupportedScheme(SignatureError):
    """The signature's scheme does not match the key given (or is unknown)."""

    code = "UNSUPPORTED_SCHEME"


class LegacySignature(SignatureError):
    """The body verifies only under the pre-0.3 AJP form; never accepted."""

    code = "LEGACY_SIGNATURE"


class KeyFormatError(AjpError, ValueError):
    """A key string or key bytes are not in an accepted, canonical form."""

    code = "BAD_KEY"


class WeakKey(KeyFormatError):
    """An Ed25519 public key that the strict policy refuses (small order, non-canonical, torsion)."""

    code = "WEAK_KEY"


class SignerFinalized(AjpError, RuntimeError):
    """An ``HmacSigner`` was used after ``finalize()`` or ``verify()``."""

    status = 500
    code = "INTERNAL"


# -- key errors --


class KeyUsageError(AjpError, TypeError, ValueError):
    """A key operation was called wrongly: a message that is not bytes, an unknown text
    form, or an unknown or uninstalled crypto backend (a caller's bug, HTTP 500)."""

    status = 500
    code = "INTERNAL"


__all__ += ["KeyUsageError"]


# -- protocol errors (AJP/IATP refusals) --


class SchemaError(AjpError, ValueError):
    """A JSON Schema ajpcore cannot compile exactly (unknown keyword, unsupported regex...).

    A programming error, never caused by a received message (HTTP 500).
    """

    status = 500
    code = "INTERNAL"


class TimestampError(AjpError, ValueError):
    """A string is not a strict RFC 3339 timestamp, or its instant is out of range."""

    code = "BAD_TIMESTAMP"


class InvalidMessage(AjpError, ValueError):
    """A well-formed envelope breaks an acceptance rule (HTTP 400).

    ``.errors`` lists every rule broken, as the reference SDK words them
    (``missing: task.type``, ``offer has expired``).
    """

    code = "INVALID_OFFER"
    title = "Invalid JobOffer"

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors) or ["invalid message"]
        super().__init__("; ".join(self.errors))

    def __reduce__(self) -> Any:
        return (type(self), (self.errors,))


class ReplayedMessage(AjpError):
    """This (sender, job_id) was already accepted and has not expired yet (HTTP 409 Conflict).

    409 rather than 400: the offer itself is well formed and authentic; it
    conflicts with the receiver's state, and a sender retrying after a lost
    response learns its first delivery was received.

    ``.same_body`` is True when the replay guard holds a digest of the accepted
    offer and it equals the digest of this one (a byte-identical retry of the
    signed content, which a receiver may answer as it answered the first); False
    when either digest is missing or they differ (another body under a job id
    already taken).  ``.job_id``: the offer's job id (set by ajpcore's guards, and by the
    receive path, ``receive_offer`` and ``ajp.Receiver``, for a guard of the host's that left
    it None), so a framework that catches the replay can answer the duplicate 202 itself.
    """

    status = 409
    code = "REPLAY"

    def __init__(
        self, reason: str = "this job was already received", *, same_body: bool = False, job_id: Optional[str] = None
    ) -> None:
        self.same_body = bool(same_body)
        self.job_id = job_id
        super().__init__(reason)

    def __reduce__(self) -> Any:
        return (_rebuild_replayed, (str(self), self.same_body, self.job_id))


class BudgetRefused(AjpError):
    """The offer's budget is not acceptable to the receiver (HTTP 402)."""

    status = 402
    code = "BUDGET_REFUSED"


class TrustRefused(AjpError):
    """The sender's identity or standing is not trusted (HTTP 403)."""

    status = 403
    code = "UNTRUSTED"


class Busy(AjpError):
    """The receiver cannot take the message now; retry after ``.retry_after`` seconds (HTTP 429)."""

    status = 429
    code = "BUSY"

    def __init__(self, reason: str, retry_after: int = 1) -> None:
        self.retry_after = int(retry_after)
        super().__init__(reason)

    def __reduce__(self) -> Any:
        return (type(self), (str(self), self.retry_after))


def _rebuild_replayed(reason: str, same_body: bool, job_id: Optional[str] = None) -> "ReplayedMessage":
    return ReplayedMessage(reason, same_body=same_body, job_id=job_id)


class StateUnavailable(AjpError, OSError):
    """The receiver's shared state (replay guard, key pins) cannot answer (HTTP 503, ``STATE_UNAVAILABLE``).

    Raised for every store failure: unreachable or timed-out server, out of
    memory, a database locked past its busy timeout, a corrupt or read-only
    file, a server configured to evict keys.  Never an acceptance: a guard that
    cannot tell whether an offer was seen refuses it.  ``.retry_after`` is the
    number of seconds (int, at least 1) a client should wait before retrying.
    Also an ``OSError``, so code that caught the ``OSError`` of a failed pin
    file write keeps working.
    """

    status = 503
    code = "STATE_UNAVAILABLE"

    def __init__(self, reason: str, retry_after: int = 1) -> None:
        self.retry_after = max(1, int(retry_after))
        AjpError.__init__(self, reason)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> Any:
        return (type(self), (str(self), self.retry_after))


class JobInProgress(AjpError):
    """This (sender, job_id) is being taken by the receiver right now: retry after ``.retry_after`` seconds (HTTP 503).

    A replay guard records an admitted offer as *pending* with a short lease
    until the host confirms it has the job (then it is accepted: a retry is
    ``ReplayedMessage``), or releases it (then a retry is admitted anew).  A
    retry that arrives while the lease runs gets this answer: the receiver
    cannot yet say "accepted" (the host may still fail) nor "admitted" (it may
    still succeed).  503 with ``Retry-After``, not 409: 409 tells an AJP sender
    its offer was taken and it must stop, which would lose the job when the
    host fails; 503 is the status every HTTP client and retry policy already
    retries, after ``Retry-After``, and 429 would blame the sender's rate.
    ``.retry_after``: whole seconds until the lease runs out (at least 1).
    """

    status = 503
    code = "IN_PROGRESS"

    def __init__(self, reason: str = "this job is being taken; retry later", retry_after: int = 1) -> None:
        self.retry_after = max(1, int(retry_after))
        super().__init__(reason)

    def __reduce__(self) -> Any:
        return (type(self), (str(self), self.retry_after))


__all__ += [
    "StateUnavailable",
    "JobInProgress",
    "SchemaError",
    "TimestampError",
    "InvalidMessage",
    "ReplayedMessage",
    "BudgetRefused",
    "TrustRefused",
    "Busy",
]


def format_path(steps: Iterable[Union[str, int]]) -> str:
    """JSON path text of a sequence of keys (str) and indices (int): ``$.a[3]["b c"]``."""
    parts = ["$"]
    for step in steps:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif step.isascii() and step.isidentifier():
            parts.append("." + step)
        else:
            parts.append("[" + _quote(step) + "]")
    return "".join(parts)


# -- sender identity (Provenance declarations, key pins) --


class SenderIdentityError(AjpError):
    """The sender of an offer could not be tied to a verified key (HTTP 403).

    ``.code`` is the reference AJP SDK's code for the failure
    (``DECLARATION_INVALID``, ``DECLARATION_LOCATION_MISMATCH``,
    ``DECLARATION_ID_MISMATCH``, ``KEY_ROTATED``, ``NO_PUBLIC_KEY``,
    ``NO_DECLARATION_URL``, ``DECLARATION_UNPARSEABLE``,
    ``SENDER_IDENTITY_FAILED``) or one of ajpcore's own
    (``CAPABILITY_NOT_DECLARED``, ``KEY_ROTATION_REFUSED``, ``DECLARATION_URL_REFUSED``,
    ``PROVENANCE_ID_NOT_CANONICAL``, ``PROVENANCE_ID_INVALID``), listed in docs/provenance.md;
    ``DECLARATION_UNREACHABLE`` (the SDK's) is raised as ``DeclarationUnreachable``.
    """

    status = 403
    code = "SENDER_IDENTITY_FAILED"

    def __init__(self, reason: str, code: str = "SENDER_IDENTITY_FAILED") -> None:
        self.code = code
        super().__init__(reason)

    def __reduce__(self) -> Any:
        return (type(self), (str(self), self.code))


class KeyRotated(SenderIdentityError):
    """A sender presented a key other than the one pinned for its provenance id (HTTP 403, ``KEY_ROTATED``).

    ``.provenance_id``, ``.pinned`` and ``.presented`` are the id and the two
    key fingerprints.  Only a key-rotation notice signed by the pinned key
    (``KeyPins.accept_rotation``) moves a pin.
    """

    code = "KEY_ROTATED"

    def __init__(self, provenance_id: str, pinned: str, presented: str) -> None:
        self.provenance_id = provenance_id
        self.pinned = pinned
        self.presented = presented
        super().__init__(
            f"sender `{provenance_id}` signs with key {presented[:16]}..., not the pinned key "
            f"{pinned[:16]}...: a key rotation, accepted only with a rotation notice signed by the pinned key",
            "KEY_ROTATED",
        )

    def __reduce__(self) -> Any:
        return (type(self), (self.provenance_id, self.pinned, self.presented))


class KeyRotationRefused(SenderIdentityError):
    """``KeyPins.accept_rotation`` was given a notice that cannot move the pin (HTTP 403, ``KEY_ROTATION_REFUSED``):
    not a valid key-rotation notice under the pinned key, or for an id the store never pinned."""

    code = "KEY_ROTATION_REFUSED"

    def __init__(self, reason: str) -> None:
        super().__init__(reason, "KEY_ROTATION_REFUSED")

    def __reduce__(self) -> Any:
        return (type(self), (str(self),))


class KeyPinsCorrupt(AjpError, ValueError):
    """A key-pin file cannot be read back exactly (not strict JSON, or not the pin file's shape).

    Never treated as an empty store: forgetting pins would accept any key as a
    first use.  A server error (HTTP 500): the receiver's own state is broken.
    """

    status = 500
    code = "INTERNAL"


__all__ += ["SenderIdentityError", "KeyRotated", "KeyRotationRefused", "KeyPinsCorrupt"]


# -- the receiver (issue 21): offers for someone else, declarations that cannot be fetched --


class RecipientMismatch(AjpError):
    """An offer addressed to someone else (HTTP 403, ``WRONG_RECIPIENT``).

    Its ``to.provenance_id`` is not one of the receiver's own ids: an agent that
    received an offer signed for it could otherwise relay it to another agent,
    which would run it.  ``.addressed_to`` is the offer's ``to.provenance_id``.
    """

    status = 403
    code = "WRONG_RECIPIENT"

    def __init__(self, addressed_to: str) -> None:
        self.addressed_to = addressed_to
        super().__init__(f"the offer is addressed to `{addressed_to}`, which is not this receiver")

    def __reduce__(self) -> Any:
        return (type(self), (self.addressed_to,))


class DeclarationUnreachable(SenderIdentityError):
    """The sender's declaration could not be fetched (HTTP 403, ``DECLARATION_UNREACHABLE``, the SDK's code).

    A host's declaration resolver raises it (a timeout, a refused connection, a
    status other than 200, a body over its size limit); ``ajp.Receiver`` also
    raises it for an ``OSError`` the resolver lets out.  Never an acceptance:
    "could not check" is not "checked".
    """

    code = "DECLARATION_UNREACHABLE"

    def __init__(self, reason: str) -> None:
        super().__init__(reason, "DECLARATION_UNREACHABLE")

    def __reduce__(self) -> Any:
        return (type(self), (str(self),))


class PayloadTooLarge(AjpError):
    """A request body over the receiver's bound (HTTP 413, ``PAYLOAD_TOO_LARGE``), refused before any decoding.

    ``.size``: the body's length in bytes (UTF-8 bytes of a ``str``), or None when an
    adapter stopped reading it at the bound; ``.limit``: the bound
    (``ajp.Receiver(max_body_bytes=...)``, default 1 MiB).
    """

    status = 413
    code = "PAYLOAD_TOO_LARGE"

    def __init__(self, size: Optional[int], limit: int) -> None:
        self.size = size
        self.limit = limit
        what = "the body" if size is None else f"the body ({size} bytes)"
        super().__init__(f"{what} is over this receiver's bound of {limit} bytes")

    def __reduce__(self) -> Any:
        return (type(self), (self.size, self.limit))


class UnsupportedMediaType(AjpError):
    """A request body that does not say it is JSON (HTTP 415, ``UNSUPPORTED_MEDIA_TYPE``).

    ``ajp.check_content_type``'s refusal: the ``Content-Type`` must be
    ``application/json``, with ``charset=utf-8`` or no parameter.  ``.content_type``:
    the header as received (None when there was none).
    """

    status = 415
    code = "UNSUPPORTED_MEDIA_TYPE"

    def __init__(self, content_type: Optional[str]) -> None:
        self.content_type = content_type
        if content_type is None:
            reason = "the request has no Content-Type: send application/json"
        else:
            reason = f"Content-Type {_quote(content_type[:100])} is not application/json (UTF-8)"
        super().__init__(reason)

    def __reduce__(self) -> Any:
        return (type(self), (self.content_type,))


__all__ += ["RecipientMismatch", "DeclarationUnreachable", "PayloadTooLarge", "UnsupportedMediaType"]

# -- A2A Agent Card signatures (ajpcore.a2a) --


class UnsupportedAlgorithm(SignatureError):
    """A JWS ``alg`` ajpcore refuses for Agent Cards (HTTP 401, ``UNSUPPORTED_ALGORITHM``):
    ``none``, any HMAC ``alg``, a name outside EdDSA/ES256/RS256/PS256 or outside the caller's
    ``algorithms``, an ``alg`` that does not fit the key's type, or an RSA key outside 2048..16384 bits."""

    code = "UNSUPPORTED_ALGORITHM"


class UntrustedKey(SignatureError):
    """A signature whose ``kid`` is not in the caller's key set, or whose ``jku`` is outside the
    caller's ``allowed_jku`` (HTTP 401, ``UNTRUSTED_KEY``).  Keys never come from ``jku``."""

    code = "UNTRUSTED_KEY"


class MalformedJws(MalformedSignature):
    """An ``AgentCardSignature`` that is not strict JWS: non-canonical base64url, a protected header
    that is not strict I-JSON (duplicate names included), no ``alg``/``kid``, ``typ`` other than
    ``JOSE``, an unknown ``crit`` extension, ``b64: false``, or an unprotected ``header`` that is not
    an object or repeats a protected name (HTTP 401, ``MALFORMED_SIGNATURE``)."""


class MalformedCard(MalformedSignature):
    """An Agent Card that cannot carry signatures: not a JSON object, ``signatures`` not an
    array of objects, or more entries than ``verify_card``'s ``max_signatures`` (HTTP 401,
    ``MALFORMED_SIGNATURE``)."""


class UnsignedCard(SignatureError):
    """An Agent Card with no ``signatures`` entry to verify (HTTP 401, ``UNSIGNED_CARD``)."""

    code = "UNSIGNED_CARD"


class JwkError(KeyFormatError):
    """A JWK or JWKS document (or a key to sign with) that ajpcore's strict rules refuse: not a JSON
    object, a private member (``d``, ``p``...), an unknown ``kty`` or curve, a missing or repeated
    ``kid``, non-canonical base64url, a point off the curve, RSA outside 2048..16384 bits or with a
    public exponent that is even, below 3 or above 2^32 - 1 (HTTP 400, ``BAD_KEY``)."""


__all__ += ["UnsupportedAlgorithm", "UntrustedKey", "MalformedJws", "MalformedCard", "UnsignedCard", "JwkError"]
