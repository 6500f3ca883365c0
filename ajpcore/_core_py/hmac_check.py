"""The HMAC check of a received body: twin of ``native/hmac_check.pxi``."""

from __future__ import annotations

from hmac import compare_digest as _compare_digest
from typing import Any, Optional

from .hmac_sink import hmac_sha256_signature


# ---------------------------------------------------------------------------
# The HMAC check of a received body: its tag when its signature is exactly that tag
# ---------------------------------------------------------------------------


def hmac_sha256_verified_tag(body: Any, secret: Any, chunk_size: Any = 65536) -> Optional[bytes]:
    """The 32-byte HMAC-SHA256 tag of ``body`` when ``body["signature"]`` is exactly its ``sha256:`` text, else None.

    The tag is ``hmac_sha256_canonical`` under ``secret`` of the JSON object ``body`` without
    its top-level ``signature`` (``body`` is not modified); it is returned when the
    signature is ``"sha256:"`` + its 64 lowercase hex digits, compared in constant time:
    the check a receiver makes, and the tag it keeps as the offer's digest, in one call.

    None decides nothing, and says nothing about the signature: it is also returned at once,
    before any hashing, when ``body`` is not a ``dict`` (exactly), ``secret`` is not a
    non-empty ``str`` or ``bytes`` (exactly), or the signature is not a 71-character ASCII
    ``str``; the caller's full check then decides and explains.  Raises what
    ``hmac_sha256_signature`` raises for such a body and secret (``EncodeError`` for a body
    with no canonical form, ``KeyFormatError`` for a secret with a lone surrogate, an error
    for a bad ``chunk_size``).
    """
    if type(body) is not dict or (type(secret) is not str and type(secret) is not bytes) or not secret:
        return None
    signature = body.get("signature")
    if type(signature) is not str or len(signature) != 71 or not signature.isascii():
        return None
    mine = hmac_sha256_signature(body, secret, chunk_size=chunk_size)
    return bytes.fromhex(mine[7:]) if _compare_digest(mine, signature) else None
