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
- ``ed25519_checks``     Ed25519 byte-level key and signature checks (RFC 8032), libsodium's verify
- ``rfc3339``            strict RFC 3339 ``date-time`` to microseconds (section 5.6); a host's clock reading (``clock_micros``)
- ``offer_shape``        what the AJP specification fixes of a JobOffer, proven in one pass (the receive fast path)
- ``slotted``            a slotted object filled through its member descriptors (the receive pipeline's objects)
- ``replay_table``       the in-memory replay guard's pairs and its usual admit (``MemoryReplayGuard``)

The texts and rules both twins must share (the limits, the int rule beyond
2**53, the decoder's error texts) live below both, in ``ajpcore._core_rules``:
the native core imports that module, never this package.  This package is the
reference: where the twins disagree, it states the intended behaviour.  It
exposes the names the native module exposes, plus the private helpers the
tests and the fuzz harness drive directly.
"""

from __future__ import annotations

import sys as _sys
from types import ModuleType as _ModuleType

from .._core_rules import MAX_DEPTH
from .number_format import _format_double as _format_double  # the twin of the native `_format_double`
from .canonical_writer import canonicalize, canonicalize_into
from .decoder import decode
# Tests and the fuzz harness drive the reference parser directly.
from .decoder import _input_bytes as _input_bytes
from .decoder import _StrictParser as _StrictParser
from . import hmac_sink
from .hmac_sink import HmacSigner, clear_hmac_cache, hmac_sha256_canonical, hmac_sha256_signature
from .hmac_check import hmac_sha256_verified_tag
from .ed25519_checks import ed25519_check_public_key, ed25519_check_signature, ed25519_sodium_verify
from .rfc3339 import clock_micros, rfc3339_micros
from .offer_shape import offer_accepted_expiry, offer_schema_instants
from .slotted import new_slotted
from .replay_table import ReplayTable

class _CorePackage(_ModuleType):
    """This package's module type: ``HMAC_CACHE_SIZE`` is ``hmac_sink``'s, read and set here.

    On the native core the bound is a global of the module callers set it on; here
    it belongs to ``hmac_sink``, which reads it at each use, and the package (its
    face) forwards the attribute down to it, so ``hmac_sink`` never reads its package.
    """

    @property
    def HMAC_CACHE_SIZE(self) -> int:
        return hmac_sink.HMAC_CACHE_SIZE

    @HMAC_CACHE_SIZE.setter
    def HMAC_CACHE_SIZE(self, size: int) -> None:
        hmac_sink.HMAC_CACHE_SIZE = size


_sys.modules[__name__].__class__ = _CorePackage

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
    "ed25519_sodium_verify",
    "rfc3339_micros",
    "clock_micros",
    "offer_schema_instants",
    "offer_accepted_expiry",
    "new_slotted",
    "ReplayTable",
]
