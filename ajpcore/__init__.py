"""ajpcore: the wire-format and crypto core of AJP and IATP.

RFC 8785 canonical JSON, a strict I-JSON decoder, HMAC-SHA256 and strict
Ed25519 signatures, and typed envelopes.  The hot paths run in a native
Cython core (``BACKEND == "c"``) with an exact pure-Python twin (``"py"``).
"""

from ._core import BACKEND, impl as _impl
from .errors import (
    AjpError,
    BadSignature,
    DecodeError,
    EncodeError,
    KeyFormatError,
    LegacySignature,
    MalformedSignature,
    SignatureError,
    SignerFinalized,
    UnsupportedScheme,
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
clear_hmac_cache = _impl.clear_hmac_cache
from .signing import sign, signing_bytes, verify  # noqa: E402  (needs the core above)


from .errors import KeyUsageError
from .keys import Ed25519PrivateKey, Ed25519PublicKey, clear_key_cache

# -- protocols (ajp, iatp, provenance, timestamps) are imported as submodules --
from .errors import (  # noqa: E402  the protocol refusals, importable from the top level
    BudgetRefused,
    Busy,
    InvalidMessage,
    ReplayedMessage,
    SchemaError,
    TimestampError,
    TrustRefused,
)

__version__ = "0.1.0"

__all__ = [
    "BACKEND",
    "MAX_DEPTH",
    "__version__",
    "canonicalize",
    "canonicalize_into",
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
    "HmacSigner",
    "clear_hmac_cache",
    "signing_bytes",
    "sign",
    "verify",
]
