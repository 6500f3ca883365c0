# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/hmac_sink.py.

# ---------------------------------------------------------------------------
# Streaming HMAC-SHA256 (RFC 2104 over OpenSSL's SHA-256 from hashlib)
# ---------------------------------------------------------------------------

# Keyed states of recently used secrets: see the pure twin for why caching them is acceptable.
HMAC_CACHE_SIZE = 32
"""How many secrets ``HmacSigner`` keeps keyed SHA-256 states for (oldest evicted first; 0: none)."""

cdef enum:
    _HMAC_BLOCK = 64  # SHA-256 block size in bytes (RFC 2104 §2: B)
    _HMAC_TAG_SIZE = 32
cdef bytes _IPAD = bytes([x ^ 0x36 for x in range(256)])
cdef bytes _OPAD = bytes([x ^ 0x5C for x in range(256)])
cdef dict _hmac_cache = {}
_hmac_cache_lock = _threading.Lock()


cdef tuple _hmac_keyed_states(object secret):
    """The (inner, outer) SHA-256 states keyed with ``secret``, from the cache when present.

    Cache keys are ``(type, value)`` pairs, as in the pure twin (no str/bytes comparison).
    """
    cdef object states, key, cache_key, size
    t = type(secret)
    if t is str or t is bytes:
        cache_key = (t, secret)
        states = _hmac_cache.get(cache_key)
        if states is not None:
            return <tuple>states
        key = secret if t is bytes else _utf8_secret(secret)
    elif isinstance(secret, str):
        # A subclass may redefine hashing and equality: key the cache by plain bytes.
        key = _utf8_secret(str.__str__(secret))
        cache_key = (bytes, key)
    elif isinstance(secret, (bytes, bytearray, memoryview)):
        key = bytes(secret)
        cache_key = (bytes, key)
    else:
        raise KeyUsageError(f"HMAC secret must be `bytes` or `str`, got `{type(secret).__qualname__}`")
    if t is not str and t is not bytes:
        states = _hmac_cache.get(cache_key)
        if states is not None:
            return <tuple>states
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
    return <tuple>states


cdef bytes _utf8_secret(str secret):
    try:
        return secret.encode("utf-8")
    except UnicodeEncodeError:
        raise KeyFormatError("HMAC secret contains a lone surrogate (not UTF-8 encodable)") from None


def clear_hmac_cache():
    """Forget every cached keyed HMAC state (and the secrets they are keyed by)."""
    with _hmac_cache_lock:
        _hmac_cache.clear()


cdef class HmacSigner:
    """Streaming HMAC-SHA256 (RFC 2104) over OpenSSL's SHA-256 (see ajpcore._core_py.HmacSigner)."""

    cdef object _inner
    cdef object _update
    cdef object _outer
    cdef bint _done

    def __init__(self, secret):
        cdef tuple states = _hmac_keyed_states(secret)
        self._inner = states[0].copy()
        self._update = self._inner.update
        self._outer = states[1]
        self._done = False

    cdef int _spent(self) except -1:
        raise SignerFinalized("HmacSigner is finalized; call copy() before finalize() to continue a stream")

    def update(self, data):
        """Feed ``data`` (bytes-like) to the MAC."""
        if self._done:
            self._spent()
        self._update(data)

    def copy(self):
        """An independent signer that has seen the same bytes."""
        if self._done:
            self._spent()
        cdef HmacSigner other = HmacSigner.__new__(HmacSigner)
        other._inner = self._inner.copy()
        other._update = other._inner.update
        other._outer = self._outer
        other._done = False
        return other

    def finalize(self):
        """The 32-byte HMAC-SHA256 tag of everything fed so far; spends the signer."""
        if self._done:
            self._spent()
        self._done = True
        outer = self._outer.copy()
        outer.update(self._inner.digest())
        self._inner = None
        self._update = None
        return outer.digest()

    def hexdigest(self):
        """``finalize()`` as 64 lowercase hex digits; spends the signer."""
        return self.finalize().hex()

    def verify(self, tag):
        """Check ``tag`` (32 bytes) against the MAC in constant time; spends the signer."""
        mac = self.finalize()
        if not isinstance(tag, (bytes, bytearray, memoryview)):
            raise BadSignature(f"HMAC-SHA256 tag must be bytes, got `{type(tag).__qualname__}`")
        tag = bytes(tag)
        if len(tag) != _HMAC_TAG_SIZE:
            raise BadSignature(f"HMAC-SHA256 tag must be {_HMAC_TAG_SIZE} bytes, got {len(tag)} (truncated tags are refused)")
        if not _compare_digest(mac, tag):
            raise BadSignature("HMAC-SHA256 tag does not match")


cdef bytes _hmac_tag(tuple states, object value, object chunk_size):
    inner = states[0].copy()
    canonicalize_into(value, inner.update, chunk_size=chunk_size)
    outer = states[1].copy()
    outer.update(inner.digest())
    return outer.digest()


def hmac_sha256_canonical(value, secret, *, chunk_size=65536):
    """HMAC-SHA256 under ``secret`` of ``canonicalize(value)``, streamed (see ajpcore._core_py)."""
    return _hmac_tag(_hmac_keyed_states(secret), value, chunk_size)


def hmac_sha256_signature(body, secret, *, chunk_size=65536):
    """``"sha256:"`` + hex HMAC-SHA256 of ``body`` without its top-level ``signature`` (see ajpcore._core_py)."""
    cdef tuple states = _hmac_keyed_states(secret)
    cdef bytes tag
    cdef const unsigned char* t
    cdef char text[71]
    cdef int i
    if not isinstance(body, dict):
        raise EncodeError(f"A signed body must be a JSON object, got `{type(body).__qualname__}`", "$")
    if PyDict_Contains(body, "signature"):
        body = PyDict_Copy(body)
        PyDict_DelItem(body, "signature")
    tag = _hmac_tag(states, body, chunk_size)
    t = <const unsigned char*>PyBytes_AS_STRING(tag)
    memcpy(text, b"sha256:", 7)
    for i in range(_HMAC_TAG_SIZE):
        text[7 + 2 * i] = _HEX[t[i] >> 4]
        text[8 + 2 * i] = _HEX[t[i] & 15]
    return PyUnicode_DecodeUTF8(text, 71, NULL)
