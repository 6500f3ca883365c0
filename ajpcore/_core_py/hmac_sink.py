"""Streaming HMAC-SHA256 (RFC 2104): twin of ``native/hmac_sink.pxi``."""

from __future__ import annotations

import threading as _threading
from hashlib import sha256 as _sha256
from hmac import compare_digest as _compare_digest
from typing import Any, Dict, Tuple

from ..errors import BadSignature, EncodeError, KeyFormatError, KeyUsageError, SignerFinalized
from .canonical_writer import _type_name, canonicalize_into


# ---------------------------------------------------------------------------
# Streaming HMAC-SHA256 (RFC 2104 over OpenSSL's SHA-256 from hashlib)
# ---------------------------------------------------------------------------

# The keyed states of recently used secrets, so a server that checks many
# messages under one secret pays the RFC 2104 key schedule once.  Caching keeps
# secret-equivalent material (the secret itself, as the dict key, and its two
# keyed SHA-256 states) alive after the caller drops it; the caller's process
# already holds that secret, and Python can never wipe an immutable ``bytes``
# or ``str`` anyway, so the cache changes how long, not whether, it is in
# memory.  It is bounded (HMAC_CACHE_SIZE secrets, oldest evicted first) and
# ``clear_hmac_cache()`` empties it, e.g. after rotating a secret.
HMAC_CACHE_SIZE = 32
"""How many secrets ``HmacSigner`` keeps keyed SHA-256 states for (oldest evicted first; 0: none).

Callers set it on the core module (``ajpcore._core.impl.HMAC_CACHE_SIZE``), as on
the native one: the package ``ajpcore._core_py`` hands that attribute to this one.
"""

_HMAC_BLOCK = 64  # SHA-256 block size in bytes (RFC 2104 §2: B)
_HMAC_TAG_SIZE = 32
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))
_hmac_cache: Dict[Tuple[type, Any], Tuple[Any, Any]] = {}
_hmac_cache_lock = _threading.Lock()


def _hmac_keyed_states(secret: Any) -> Tuple[Any, Any]:
    """The (inner, outer) SHA-256 states keyed with ``secret``, from the cache when present.

    Cache keys are ``(type, value)`` pairs: ``"k"`` and ``b"k"`` hash alike, and a
    plain ``str``-versus-``bytes`` key comparison would raise ``BytesWarning``
    under ``python -bb``; the pair compares the types first and stops there.
    """
    t = type(secret)
    if t is str or t is bytes:
        cache_key: Tuple[type, Any] = (t, secret)
        states = _hmac_cache.get(cache_key)
        if states is not None:
            return states
        key = secret if t is bytes else _utf8_secret(secret)
    elif issubclass(type(secret), str):
        # A subclass may redefine hashing and equality: key the cache by plain bytes.
        key = _utf8_secret(str.__str__(secret))
        cache_key = (bytes, key)
    elif issubclass(type(secret), (bytes, bytearray, memoryview)):
        key = bytes(secret)
        cache_key = (bytes, key)
    else:
        raise KeyUsageError(f"HMAC secret must be `bytes` or `str`, got `{_type_name(secret)}`")
    if t is not str and t is not bytes:
        states = _hmac_cache.get(cache_key)
        if states is not None:
            return states
    # RFC 2104 §2: a key longer than the block is hashed first, then zero-padded to B bytes.
    if len(key) > _HMAC_BLOCK:
        key = _sha256(key).digest()
    key = key.ljust(_HMAC_BLOCK, b"\0")
    states = (_sha256(key.translate(_IPAD)), _sha256(key.translate(_OPAD)))
    # One read of the bound per call: another thread may set it (to 0, say) meanwhile.
    size = HMAC_CACHE_SIZE
    if size > 0:
        with _hmac_cache_lock:
            while len(_hmac_cache) >= size:
                del _hmac_cache[next(iter(_hmac_cache))]
            _hmac_cache[cache_key] = states
    return states


def _utf8_secret(secret: str) -> bytes:
    try:
        return secret.encode("utf-8")
    except UnicodeEncodeError:
        raise KeyFormatError("HMAC secret contains a lone surrogate (not UTF-8 encodable)") from None


def clear_hmac_cache() -> None:
    """Forget every cached keyed HMAC state (and the secrets they are keyed by)."""
    with _hmac_cache_lock:
        _hmac_cache.clear()


class HmacSigner:
    """Streaming HMAC-SHA256 (RFC 2104) over OpenSSL's SHA-256 from ``hashlib``.

    ``HmacSigner(secret)`` with ``secret`` as ``bytes`` (also bytearray or
    memoryview) or ``str`` (UTF-8) of any length; ``update(data)`` feeds bytes;
    ``finalize()`` returns the 32-byte tag (the same bytes as
    ``hmac.digest(secret, message, "sha256")``); ``hexdigest()`` its lowercase
    hex; ``verify(tag)`` compares in constant time and raises ``BadSignature``
    on a mismatch or a tag that is not exactly 32 bytes (truncated tags are
    refused).  After ``finalize``, ``hexdigest`` or ``verify`` the signer is
    spent: any further call raises ``SignerFinalized`` (``copy()`` first to
    continue a stream).  A secret of another type raises ``KeyUsageError``; a
    ``str`` secret that is not UTF-8 encodable (lone surrogate) ``KeyFormatError``.
    """

    __slots__ = ("_inner", "_outer", "_done")

    def __init__(self, secret: Any) -> None:
        inner, outer = _hmac_keyed_states(secret)
        self._inner = inner.copy()
        self._outer = outer
        self._done = False

    def _spent(self) -> None:
        raise SignerFinalized("HmacSigner is finalized; call copy() before finalize() to continue a stream")

    def update(self, data: Any) -> None:
        """Feed ``data`` (bytes-like) to the MAC."""
        if self._done:
            self._spent()
        self._inner.update(data)

    def copy(self) -> "HmacSigner":
        """An independent signer that has seen the same bytes."""
        if self._done:
            self._spent()
        other = HmacSigner.__new__(HmacSigner)
        other._inner = self._inner.copy()
        other._outer = self._outer
        other._done = False
        return other

    def finalize(self) -> bytes:
        """The 32-byte HMAC-SHA256 tag of everything fed so far; spends the signer."""
        if self._done:
            self._spent()
        self._done = True
        outer = self._outer.copy()
        outer.update(self._inner.digest())
        self._inner = None
        tag: bytes = outer.digest()
        return tag

    def hexdigest(self) -> str:
        """``finalize()`` as 64 lowercase hex digits; spends the signer."""
        return self.finalize().hex()

    def verify(self, tag: Any) -> None:
        """Check ``tag`` (32 bytes) against the MAC in constant time; spends the signer.

        Raises BadSignature on a mismatch or when ``tag`` is not exactly 32 bytes.
        """
        mac = self.finalize()
        if not issubclass(type(tag), (bytes, bytearray, memoryview)):
            raise BadSignature(f"HMAC-SHA256 tag must be bytes, got `{_type_name(tag)}`")
        tag = bytes(tag)
        if len(tag) != _HMAC_TAG_SIZE:
            raise BadSignature(f"HMAC-SHA256 tag must be {_HMAC_TAG_SIZE} bytes, got {len(tag)} (truncated tags are refused)")
        if not _compare_digest(mac, tag):
            raise BadSignature("HMAC-SHA256 tag does not match")


def _hmac_tag(states: Tuple[Any, Any], value: Any, chunk_size: Any) -> bytes:
    """The HMAC-SHA256 tag of ``canonicalize(value)`` under the keyed ``states``, streamed."""
    inner = states[0].copy()
    canonicalize_into(value, inner.update, chunk_size=chunk_size)
    outer = states[1].copy()
    outer.update(inner.digest())
    tag: bytes = outer.digest()
    return tag


def hmac_sha256_canonical(value: Any, secret: Any, *, chunk_size: int = 65536) -> bytes:
    """HMAC-SHA256 under ``secret`` of ``canonicalize(value)``, streamed: the 32-byte tag.

    The canonical bytes go straight from the encoder into the keyed SHA-256 state
    in chunks of at most ``chunk_size``, never held whole: the same tag as
    ``hmac.digest(secret, canonicalize(value), "sha256")`` in O(chunk_size)
    memory.  Raises what ``HmacSigner(secret)`` and ``canonicalize_into`` raise.
    """
    return _hmac_tag(_hmac_keyed_states(secret), value, chunk_size)


def hmac_sha256_signature(body: Any, secret: Any, *, chunk_size: int = 65536) -> str:
    """The ``sha256:`` signature text of the JSON object ``body`` under ``secret``.

    ``"sha256:"`` + 64 lowercase hex digits of ``hmac_sha256_canonical`` over
    ``body`` without its top-level ``signature`` member (``body`` itself is not
    modified): what ``ajpcore.signing.sign`` returns for a dict, in one call.
    A ``dict`` subclass is read as the ``dict`` it stores.  Raises what
    ``hmac_sha256_canonical`` raises, and ``EncodeError`` when ``body`` is not a ``dict``.
    """
    states = _hmac_keyed_states(secret)
    if not issubclass(type(body), dict):
        raise EncodeError(f"A signed body must be a JSON object, got `{_type_name(body)}`", "$")
    if dict.__contains__(body, "signature"):
        body = dict.copy(body)
        del body["signature"]
    return "sha256:" + _hmac_tag(states, body, chunk_size).hex()
