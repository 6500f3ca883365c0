"""Pure-Python twin of ``ajpcore._core_c``.

Same functions, same order, same bytes, same errors as the native core; read
the two side by side, one module per concern, each beside the ``.pxi`` of the
same name in ``native/``:

- ``number_format``      ECMAScript number text (RFC 8785 §3.2.2.3)
- ``canonical_strings``  string escaping and member-name order (RFC 8785 §3.2.2.2, §3.2.3)
- ``canonical_writer``   ``canonicalize``, ``canonicalize_into`` (RFC 8785)
- ``decoder``            ``decode``: strict RFC 8259 + I-JSON (RFC 7493)
- ``hmac_sink``          ``HmacSigner``, ``hmac_sha256_canonical``, ``hmac_sha256_signature`` (RFC 2104)
- ``hmac_check``         ``hmac_sha256_verified_tag``: a received body's tag when its signature is that tag
- ``ed25519_checks``     Ed25519 byte-level key and signature checks (RFC 8032)
- ``rfc3339``            strict RFC 3339 ``date-time`` to microseconds (section 5.6)

``limits`` holds what the native header (``native/_core_c.pyx``) declares for
all of them.  This package is the reference: where the twins disagree, it
states the intended behaviour.  It exposes the names the native module exposes,
plus the private helpers the native core and the tests share with it.
"""

from __future__ import annotations

from .limits import MAX_DEPTH
from .number_format import _format_double as _format_double  # ajpcore.strategies
from .number_format import _format_int as _format_int  # the native core's ints beyond 2**53
from .canonical_writer import canonicalize, canonicalize_into
from .decoder import decode
# The native decoder shares these error texts and the big-int rule; tests and the
# fuzz harness drive the reference parser directly.
from .decoder import _decode_big_int as _decode_big_int
from .decoder import _decode_error as _decode_error
from .decoder import _duplicate_reason as _duplicate_reason
from .decoder import _input_bytes as _input_bytes
from .decoder import _noncharacter_reason as _noncharacter_reason
from .decoder import _Refusal as _Refusal
from .decoder import _StrictParser as _StrictParser
from .decoder import _surrogate_reason as _surrogate_reason
from .hmac_sink import HmacSigner, clear_hmac_cache, hmac_sha256_canonical, hmac_sha256_signature
from .hmac_check import hmac_sha256_verified_tag
from .ed25519_checks import ed25519_check_public_key, ed25519_check_signature
from .rfc3339 import rfc3339_micros

HMAC_CACHE_SIZE = 32
"""How many secrets ``HmacSigner`` keeps keyed SHA-256 states for (oldest evicted first; 0: none).

Read by ``hmac_sink`` from this package at each use, so setting it here (as on
the native module) takes effect.
"""

__all__ = [
    "MAX_DEPTH",
    "canonicalize",
    "canonicalize_into",
    "decode",
    "HMAC_CACHE_SIZE",
    "clear_hmac_cache",
    "HmacSigner",
    "hmac_sha256_canonical",
    "hmac_sha256_signature",
    "hmac_sha256_verified_tag",
    "ed25519_check_public_key",
    "ed25519_check_signature",
    "rfc3339_micros",
]
