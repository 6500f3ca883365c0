"""Pure-Python twin of ``ajpcore._core_c``.

Same functions, same order, same bytes, same errors as ``native/_core_c.pyx``;
read the two side by side.  This module is the reference: where the twins
disagree, this one states the intended behaviour.
"""

from __future__ import annotations

from json.encoder import encode_basestring as _escape_str
from typing import Any, Callable, List

from .errors import EncodeError, format_path

MAX_DEPTH = 512
"""Deepest nesting of containers ``canonicalize`` accepts (``[]`` has depth 1)."""

_MAX_SAFE_INT = 2**53 - 1


# ---------------------------------------------------------------------------
# Canonical JSON (RFC 8785)
# ---------------------------------------------------------------------------


def _format_double(x: float) -> str:
    """ECMAScript ``Number.prototype.toString`` of a finite double (RFC 8785 §3.2.2.3).

    ``float.__repr__`` gives the shortest round-trip digits (the same digits
    ECMAScript chooses); only their layout differs, so the digits and the
    decimal exponent are re-laid out by the ECMA-262 7.1.12.1 rules.
    """
    if x == 0.0:
        return "0"  # also -0.0
    r = float.__repr__(x)
    sign = ""
    if r[0] == "-":
        sign = "-"
        r = r[1:]
    mant, e_sep, exp = r.partition("e")
    exp10 = int(exp) if e_sep else 0
    int_part, _, frac_part = mant.partition(".")
    if frac_part == "0":
        frac_part = ""
    digits = int_part + frac_part
    # n: position of the decimal point relative to the start of `digits`.
    n = len(int_part) + exp10
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp_text = ("e+" if e >= 0 else "e-") + str(abs(e))
    if k == 1:
        return sign + digits + exp_text
    return sign + digits[0] + "." + digits[1:] + exp_text


def _format_int(n: int, path: Callable[[], str]) -> str:
    """The canonical text of an int, or EncodeError if a JavaScript peer would change it.

    Beyond +-(2**53-1) an int must be the double it stands for (``int(float(n)) == n``)
    or be spelled exactly as ECMAScript spells that double; it is written as
    ECMAScript writes the double.
    """
    text = int.__repr__(n)
    if -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT:
        return text
    try:
        x = float(n)
    except OverflowError:
        raise EncodeError("Integer out of range for binary64", path()) from None
    es = _format_double(x)
    if int(x) == n or es == text:
        return es
    raise EncodeError(
        "Integer is not exactly representable as binary64 (would change through a JavaScript peer)",
        path(),
    )


def _utf16_key(key: str) -> bytes:
    # RFC 8785 §3.2.3: member names sort by their UTF-16 code units.
    return key.encode("utf-16-be", "surrogatepass")


def _type_name(value: Any) -> str:
    return type(value).__qualname__


def _scalar(v: Any, steps: List[Any]) -> str:
    """Canonical text of a non-container value (the slow, rare types)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return _format_int(int(v), lambda: format_path(steps))
    if isinstance(v, float):
        x = float(v)
        if x != x or x in (_INF, -_INF):
            raise EncodeError(f"Non-finite float `{float.__repr__(x)}` has no JSON form", format_path(steps))
        return _format_double(x)
    if isinstance(v, str):
        return _escape_str(v)
    raise EncodeError(f"Unsupported type `{_type_name(v)}`", format_path(steps))


_INF = float("inf")


def _sorted_keys(d: dict, steps: List[Any]) -> List[str]:
    keys = list(dict.keys(d))
    ascii_only = True
    for k in keys:
        if not isinstance(k, str):
            raise EncodeError(f"Object key must be `str`, got `{_type_name(k)}`", format_path(steps))
        if not k.isascii():
            ascii_only = False
    if ascii_only:
        keys.sort()
    else:
        # RFC 8785 §3.2.3: member names sort by their UTF-16 code units.
        keys.sort(key=_utf16_key)
    return keys


def _encode(value: Any, append: Callable[[str], Any], steps: List[Any]) -> None:
    """Feed the canonical text of ``value`` to ``append`` as ``str`` pieces, in order.

    An explicit stack instead of recursion: depth is bounded by MAX_DEPTH only,
    never by the interpreter's recursion limit.  ``steps`` tracks the JSON path
    (keys and indices) of the value being written; it is formatted only on error.
    """
    frames: List[list] = []  # [container, keys or None, next index, length]
    v = value
    while True:
        t = type(v)
        if t is str:
            append(_escape_str(v))
        elif t is int and -_MAX_SAFE_INT <= v <= _MAX_SAFE_INT:
            append(int.__repr__(v))
        elif t is float and v - v == 0.0:  # finite
            append(_format_double(v))
        elif t is dict or (t is not str and isinstance(v, dict)):
            if len(frames) >= MAX_DEPTH:
                raise EncodeError(f"Nesting deeper than {MAX_DEPTH}", format_path(steps))
            if not v:
                append("{}")
            else:
                keys = _sorted_keys(v, steps)
                k = keys[0]
                frames.append([v, keys, 1, len(keys)])
                steps.append(k)
                append("{")
                append(_escape_str(k))
                append(":")
                v = dict.__getitem__(v, k)
                continue
        elif t is list or t is tuple or isinstance(v, (list, tuple)):
            if len(frames) >= MAX_DEPTH:
                raise EncodeError(f"Nesting deeper than {MAX_DEPTH}", format_path(steps))
            if not v:
                append("[]")
            else:
                frames.append([v, None, 1, len(v)])
                steps.append(0)
                append("[")
                v = v[0]
                continue
        else:
            append(_scalar(v, steps))
        # The value is written: close finished containers, move to the next member.
        while frames:
            frame = frames[-1]
            container, keys, i, n = frame
            if i < n:
                frame[2] = i + 1
                append(",")
                if keys is None:
                    steps[-1] = i
                    v = container[i]
                else:
                    k = keys[i]
                    steps[-1] = k
                    append(_escape_str(k))
                    append(":")
                    v = dict.__getitem__(container, k)
                break
            frames.pop()
            steps.pop()
            append("]" if keys is None else "}")
        else:
            return


def _discard(chunk: bytes) -> None:
    pass


def canonicalize(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value`` as UTF-8 bytes.

    Accepts dict (str keys), list, tuple, str, int, float, bool and None.
    Raises EncodeError, naming the JSON path, for anything without an exact
    canonical form (NaN, infinities, lone surrogates, non-str keys, other
    types, ints a binary64 cannot carry, nesting deeper than MAX_DEPTH).
    """
    pieces: List[str] = []
    _encode(value, pieces.append, [])
    text = "".join(pieces)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # Slow path, taken only to report the first bad string in output order.
        canonicalize_into(value, _discard)
        raise AssertionError("unreachable: streaming found no lone surrogate")  # pragma: no cover


def canonicalize_into(value: Any, write: Callable[[bytes], Any], *, chunk_size: int = 65536) -> int:
    """Hand the canonical bytes of ``value`` to ``write`` in chunks of at most ``chunk_size``.

    Gives exactly the bytes of ``canonicalize(value)`` and returns their count.
    The whole output is never held at once, so signing a large document costs
    O(chunk_size) extra memory.  Raises what ``canonicalize`` raises; chunks
    written before an error was found have already reached ``write``.
    """
    if type(chunk_size) is not int or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    steps: List[Any] = []
    buf = bytearray()
    total = 0
    # A long string is encoded in slices so no piece of output outgrows the chunk.
    slice_chars = max(1, chunk_size // 4)

    def append(piece: str) -> None:
        nonlocal total
        for start in range(0, len(piece), slice_chars):
            try:
                data = piece[start : start + slice_chars].encode("utf-8")
            except UnicodeEncodeError:
                raise EncodeError("String contains a lone surrogate", format_path(steps)) from None
            buf.extend(data)
            while len(buf) >= chunk_size:
                write(bytes(buf[:chunk_size]))
                del buf[:chunk_size]
                total += chunk_size

    _encode(value, append, steps)
    if buf:
        write(bytes(buf))
        total += len(buf)
    return total


# ---------------------------------------------------------------------------
# Strict decoding (RFC 8259 + I-JSON, RFC 7493)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Streaming HMAC-SHA256 (RFC 2104 over OpenSSL's SHA-256 from hashlib)
# ---------------------------------------------------------------------------

import threading as _threading
from hashlib import sha256 as _sha256
from hmac import compare_digest as _compare_digest

from .errors import BadSignature, KeyFormatError, KeyUsageError, SignerFinalized

# The keyed states of recently used secrets, so a server that checks many
# messages under one secret pays the RFC 2104 key schedule once.  Caching keeps
# secret-equivalent material (the secret itself, as the dict key, and its two
# keyed SHA-256 states) alive after the caller drops it; the caller's process
# already holds that secret, and Python can never wipe an immutable ``bytes``
# or ``str`` anyway, so the cache changes how long, not whether, it is in
# memory.  It is bounded (HMAC_CACHE_SIZE secrets, oldest evicted first) and
# ``clear_hmac_cache()`` empties it, e.g. after rotating a secret.
HMAC_CACHE_SIZE = 32
"""How many secrets ``HmacSigner`` keeps keyed SHA-256 states for (oldest evicted first)."""

_HMAC_BLOCK = 64  # SHA-256 block size in bytes (RFC 2104 §2: B)
_HMAC_TAG_SIZE = 32
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))
_hmac_cache: dict = {}
_hmac_cache_lock = _threading.Lock()


def _hmac_keyed_states(secret: Any) -> tuple:
    """The (inner, outer) SHA-256 states keyed with ``secret``, from the cache when present."""
    t = type(secret)
    if t is str or t is bytes:
        states = _hmac_cache.get(secret)
        if states is not None:
            return states
        cache_key = secret
        key = secret if t is bytes else _utf8_secret(secret)
    elif isinstance(secret, str):
        # A subclass may redefine hashing and equality: key the cache by plain bytes.
        key = cache_key = _utf8_secret(str.__str__(secret))
    elif isinstance(secret, (bytes, bytearray, memoryview)):
        key = cache_key = bytes(secret)
    else:
        raise KeyUsageError(f"HMAC secret must be `bytes` or `str`, got `{_type_name(secret)}`")
    if cache_key is not secret:
        states = _hmac_cache.get(cache_key)
        if states is not None:
            return states
    # RFC 2104 §2: a key longer than the block is hashed first, then zero-padded to B bytes.
    if len(key) > _HMAC_BLOCK:
        key = _sha256(key).digest()
    key = key.ljust(_HMAC_BLOCK, b"\0")
    states = (_sha256(key.translate(_IPAD)), _sha256(key.translate(_OPAD)))
    with _hmac_cache_lock:
        if len(_hmac_cache) >= HMAC_CACHE_SIZE:
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
        return outer.digest()

    def hexdigest(self) -> str:
        """``finalize()`` as 64 lowercase hex digits; spends the signer."""
        return self.finalize().hex()

    def verify(self, tag: Any) -> None:
        """Check ``tag`` (32 bytes) against the MAC in constant time; spends the signer.

        Raises BadSignature on a mismatch or when ``tag`` is not exactly 32 bytes.
        """
        mac = self.finalize()
        if not isinstance(tag, (bytes, bytearray, memoryview)):
            raise BadSignature(f"HMAC-SHA256 tag must be bytes, got `{_type_name(tag)}`")
        tag = bytes(tag)
        if len(tag) != _HMAC_TAG_SIZE:
            raise BadSignature(f"HMAC-SHA256 tag must be {_HMAC_TAG_SIZE} bytes, got {len(tag)} (truncated tags are refused)")
        if not _compare_digest(mac, tag):
            raise BadSignature("HMAC-SHA256 tag does not match")


# ---------------------------------------------------------------------------
# Ed25519 byte-level checks (RFC 8032 encodings; strict policy)
# ---------------------------------------------------------------------------

from .errors import BadSignature, KeyFormatError, MalformedSignature, WeakKey  # noqa: E402

_ED25519_P = 2**255 - 19
_ED25519_L = 2**252 + 27742317777372353535851937790883648493
# y-coordinates (< p) of the 8 points of order 1, 2, 4 and 8: any point with one of
# these y is of small order whatever its sign bit (libsodium's blocklist, RFC 8032 §5.1.3).
_ED25519_SMALL_ORDER_Y = frozenset(
    (
        0,
        1,
        _ED25519_P - 1,
        0x05FC536D880238B13933C6D305ACDFD5F098EFF289F4C345B027B2C28F95E826,
        0x7A03AC9277FDC74EC6CC392CFA53202A0F67100D760B3CBA4FD84D3D706A17C7,
    )
)


def _ed25519_bytes(data: Any, what: str, error: type) -> bytes:
    if type(data) is bytes:
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise error(f"{what} must be bytes, got `{type(data).__name__}`")


def _ed25519_point_refusal(enc: bytes) -> int:
    """0 if a 32-byte point encoding is admitted, 1 if y >= p, 2 if x = 0 with the sign
    bit set, 3 if the point has small order."""
    y = int.from_bytes(enc, "little") & ((1 << 255) - 1)  # bit 255 is the sign of x
    if y >= _ED25519_P:
        return 1
    if y in _ED25519_SMALL_ORDER_Y:
        # y = 1 and y = p - 1 are the two points with x = 0, which has no negative (RFC 8032 §5.1.3 step 4).
        if enc[31] & 0x80 and (y == 1 or y == _ED25519_P - 1):
            return 2
        return 3
    return 0


def ed25519_check_public_key(raw: Any) -> None:
    """Refuse an Ed25519 public key encoding the strict policy does not admit.

    ``raw`` is the 32-byte RFC 8032 encoding (bytes-like).  Raises
    ``KeyFormatError`` for another type or length, ``WeakKey`` when y >= p
    (non-canonical) or the point has small order (order 1, 2, 4 or 8).
    """
    raw = _ed25519_bytes(raw, "Ed25519 public key", KeyFormatError)
    if len(raw) != 32:
        raise KeyFormatError(f"Ed25519 public key must be 32 bytes, got {len(raw)}")
    refusal = _ed25519_point_refusal(raw)
    if refusal == 1:
        raise WeakKey("Ed25519 public key is not canonically encoded (y >= p)")
    if refusal == 2:
        raise WeakKey("Ed25519 public key is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise WeakKey("Ed25519 public key has small order")


def ed25519_check_signature(sig: Any) -> None:
    """Refuse an Ed25519 signature the strict policy does not admit, before any arithmetic.

    ``sig`` is the raw 64 bytes R || S (bytes-like).  Raises
    ``MalformedSignature`` for a non-bytes value and ``BadSignature`` for a
    length other than 64, an R with y >= p, an R of small order, or S >= L
    (RFC 8032 §5.1.7: S must be in range; R must be the canonical encoding).
    """
    sig = _ed25519_bytes(sig, "Ed25519 signature", MalformedSignature)
    if len(sig) != 64:
        raise BadSignature(f"Ed25519 signature must be 64 bytes, got {len(sig)}")
    refusal = _ed25519_point_refusal(sig[:32])
    if refusal == 1:
        raise BadSignature("Ed25519 signature R is not canonically encoded (y >= p)")
    if refusal == 2:
        raise BadSignature("Ed25519 signature R is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise BadSignature("Ed25519 signature R has small order")
    if int.from_bytes(sig[32:], "little") >= _ED25519_L:
        raise BadSignature("Ed25519 signature S is not reduced (S >= L)")
