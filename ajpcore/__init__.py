"""ajpcore: the wire-format and crypto core of AJP and IATP.

RFC 8785 canonical JSON, a strict I-JSON decoder, HMAC-SHA256 and strict
Ed25519 signatures, and typed envelopes.  The hot paths run in a native
Cython core (``BACKEND == "c"``) with an exact pure-Python twin (``"py"``),
chosen once at import (see ``ajpcore._core``).  The protocol layers are
submodules: ``ajpcore.ajp``, ``ajpcore.iatp``, ``ajpcore.provenance``,
``ajpcore.timestamps``; hypothesis strategies live in ``ajpcore.strategies``.
"""

from ._core import BACKEND, clear_hmac_cache, impl as _impl
from .errors import (
    AjpError,
    BadSignature,
    BudgetRefused,
    Busy,
    DeclarationUnreachable,
    DecodeError,
    EncodeError,
    InvalidMessage,
    JobInProgress,
    JwkError,
    KeyFormatError,
    KeyPinsCorrupt,
    KeyRotated,
    KeyRotationRefused,
    KeyUsageError,
    LegacySignature,
    MalformedCard,
    MalformedJws,
    MalformedSignature,
    PayloadTooLarge,
    RecipientMismatch,
    ReplayedMessage,
    SchemaError,
    SenderIdentityError,
    SignatureError,
    SignerFinalized,
    StateUnavailable,
    TimestampError,
    TrustRefused,
    UnsignedCard,
    UnsupportedAlgorithm,
    UnsupportedMediaType,
    UnsupportedScheme,
    UntrustedKey,
    ValidationError,
    WeakKey,
)

# -- canonical JSON --
canonicalize = _impl.canonicalize
canonicalize_into = _impl.canonicalize_into
MAX_DEPTH = _impl.MAX_DEPTH

# -- strict decoding --
decode = _impl.decode

# -- signatures and keys --
HmacSigner = _impl.HmacSigner


from .keys import Ed25519PrivateKey, Ed25519PublicKey, clear_key_cache  # noqa: E402  (needs the core)
from .signing import sign, signing_bytes, verify  # noqa: E402
from ._version import __version__  # noqa: E402


__all__ = [
    "BACKEND",
    "MAX_DEPTH",
    "__version__",
    # core
    "canonicalize",
    "canonicalize_into",
    "decode",
    "HmacSigner",
    "clear_hmac_cache",
    # signatures and keys
    "signing_bytes",
    "sign",
    "verify",
    "Ed25519PrivateKey",
    "Ed25519PublicKey",
    "clear_key_cache",
    # errors
    "AjpError",
    "EncodeError",
    "DecodeError",
    "ValidationError",
    "SchemaError",
    "TimestampError",
    "InvalidMessage",
    "SignatureError",
    "BadSignature",
    "MalformedSignature",
    "UnsupportedScheme",
    "LegacySignature",
    "KeyFormatError",
    "KeyUsageError",
    "WeakKey",
    "SignerFinalized",
    "ReplayedMessage",
    "BudgetRefused",
    "TrustRefused",
    "Busy",
    "StateUnavailable",
    "JobInProgress",
    "SenderIdentityError",
    "KeyRotated",
    "KeyRotationRefused",
    "KeyPinsCorrupt",
    "RecipientMismatch",
    "DeclarationUnreachable",
    "PayloadTooLarge",
    "UnsupportedMediaType",
    # A2A Agent Card signatures (ajpcore.a2a)
    "UnsupportedAlgorithm",
    "UntrustedKey",
    "MalformedJws",
    "MalformedCard",
    "UnsignedCard",
    "JwkError",
]
