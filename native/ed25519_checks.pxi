# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/ed25519_checks.py.

# ---------------------------------------------------------------------------
# Ed25519 byte-level checks (RFC 8032 encodings; strict policy)
# ---------------------------------------------------------------------------

# Little-endian encodings of p = 2**255 - 19 and of the group order L (RFC 8032 §5.1).
cdef bytes _ED25519_P = bytes.fromhex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
cdef bytes _ED25519_L = bytes.fromhex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
# y-coordinates (< p) of the 8 points of order 1, 2, 4 and 8: any point with one of
# these y is of small order whatever its sign bit (libsodium's blocklist, RFC 8032 §5.1.3).
cdef bytes _ED25519_SMALL_ORDER_Y = bytes.fromhex(
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0100000000000000000000000000000000000000000000000000000000000000"
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"
)


cdef bytes _ed25519_bytes(object data, str what, object error):
    if type(data) is bytes:
        return <bytes>data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise error(f"{what} must be bytes, got `{type(data).__name__}`")


cdef inline bint _le_at_least(const unsigned char* a, const unsigned char* b) noexcept:
    """a >= b for two 32-byte little-endian numbers."""
    cdef int i = 31
    while i >= 0:
        if a[i] != b[i]:
            return a[i] > b[i]
        i -= 1
    return True


cdef int _ed25519_point_refusal(const unsigned char* enc) noexcept:
    """0 if a 32-byte point encoding is admitted, 1 if y >= p, 2 if x = 0 with the sign
    bit set, 3 if the point has small order."""
    cdef unsigned char y[32]
    cdef const unsigned char* small = <const unsigned char*>PyBytes_AS_STRING(_ED25519_SMALL_ORDER_Y)
    cdef int k
    memcpy(y, enc, 32)
    y[31] &= 0x7F  # bit 255 is the sign of x
    if _le_at_least(y, <const unsigned char*>PyBytes_AS_STRING(_ED25519_P)):
        return 1
    for k in range(5):
        if memcmp(y, small + 32 * k, 32) == 0:
            # y = 1 and y = p - 1 are the two points with x = 0, which has no negative (RFC 8032 §5.1.3 step 4).
            if (enc[31] & 0x80) and (k == 1 or k == 2):
                return 2
            return 3
    return 0


def ed25519_check_public_key(raw):
    """Refuse an Ed25519 public key encoding the strict policy does not admit.

    ``raw`` is the 32-byte RFC 8032 encoding (bytes-like).  Raises
    ``KeyFormatError`` for another type or length, ``WeakKey`` when y >= p
    (non-canonical) or the point has small order (order 1, 2, 4 or 8).
    """
    cdef bytes b = _ed25519_bytes(raw, "Ed25519 public key", KeyFormatError)
    if len(b) != 32:
        raise KeyFormatError(f"Ed25519 public key must be 32 bytes, got {len(b)}")
    cdef int refusal = _ed25519_point_refusal(<const unsigned char*>PyBytes_AS_STRING(b))
    if refusal == 1:
        raise WeakKey("Ed25519 public key is not canonically encoded (y >= p)")
    if refusal == 2:
        raise WeakKey("Ed25519 public key is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise WeakKey("Ed25519 public key has small order")


def ed25519_check_signature(sig):
    """Refuse an Ed25519 signature the strict policy does not admit, before any arithmetic.

    ``sig`` is the raw 64 bytes R || S (bytes-like).  Raises
    ``MalformedSignature`` for a non-bytes value and ``BadSignature`` for a
    length other than 64, an R with y >= p, an R of small order, or S >= L
    (RFC 8032 §5.1.7: S must be in range; R must be the canonical encoding).
    """
    _ed25519_checked_signature(sig)


cdef bytes _ed25519_checked_signature(object sig):
    """``sig`` as the bytes ``ed25519_check_signature`` admits, else its refusal."""
    cdef bytes b = _ed25519_bytes(sig, "Ed25519 signature", MalformedSignature)
    if len(b) != 64:
        raise BadSignature(f"Ed25519 signature must be 64 bytes, got {len(b)}")
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(b)
    cdef int refusal = _ed25519_point_refusal(s)
    if refusal == 1:
        raise BadSignature("Ed25519 signature R is not canonically encoded (y >= p)")
    if refusal == 2:
        raise BadSignature("Ed25519 signature R is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise BadSignature("Ed25519 signature R has small order")
    if _le_at_least(s + 32, <const unsigned char*>PyBytes_AS_STRING(_ED25519_L)):
        raise BadSignature("Ed25519 signature S is not reduced (S >= L)")
    return b


# ---------------------------------------------------------------------------
# Ed25519 verification through libsodium, without the GIL
# ---------------------------------------------------------------------------

from libc.stdlib cimport free, malloc

ctypedef int (*_SodiumSignOpen)(unsigned char* m, unsigned long long* mlen, const unsigned char* sm,
                                unsigned long long smlen, const unsigned char* pk) noexcept nogil
cdef _SodiumSignOpen _sodium_sign_open = NULL


cdef int _sodium_load() except -1:
    """Find libsodium's ``crypto_sign_open`` in PyNaCl (initialized by importing ``nacl.bindings``).

    The pointer is the function PyNaCl's own ``crypto_sign_open`` calls, taken from its cffi
    library: the same libsodium, called directly, so that nothing between the call and the
    arithmetic needs the GIL.  Two threads may both load it: they store the same pointer.
    """
    global _sodium_sign_open
    import nacl.bindings  # noqa: F401  (runs sodium_init)
    from nacl._sodium import ffi, lib
    address = int(ffi.cast("uintptr_t", ffi.addressof(lib, "crypto_sign_open")))
    _sodium_sign_open = <_SodiumSignOpen><size_t>address
    return 0


def ed25519_sodium_verify(sig, data, key):
    """True when ``sig`` is a valid Ed25519 signature of ``data`` under ``key`` by libsodium, False when not.

    ``sig`` is refused first as ``ed25519_check_signature`` refuses it; ``data`` is any
    bytes-like object, ``key`` the 32-byte public key ``ed25519_check_public_key`` admitted.
    The message is read, and verified, without the GIL: it is pinned by a held buffer (a
    ``bytearray`` cannot be resized meanwhile), the signature and key by their references.
    libsodium wants ``signature || message`` and room for the message it returns: both are
    C allocations, so the caller's thread holds the GIL only for the checks.
    """
    cdef bytes s = _ed25519_checked_signature(sig)
    cdef bytes k = key
    cdef const unsigned char* sp = <const unsigned char*>PyBytes_AS_STRING(s)
    cdef const unsigned char* kp = <const unsigned char*>PyBytes_AS_STRING(k)
    cdef Py_buffer view
    cdef unsigned char* signed
    cdef unsigned long long opened = 0
    cdef int rc
    if len(k) != 32:
        raise KeyFormatError(f"Ed25519 public key must be 32 bytes, got {len(k)}")
    if _sodium_sign_open == NULL:
        _sodium_load()
    try:
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    except BufferError:  # a non-contiguous memoryview: its bytes, in order
        data = bytes(data)
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        # One block: signature || message, then the room libsodium copies the message into.
        signed = <unsigned char*>malloc(2 * <size_t>view.len + 64)
        if signed == NULL:
            raise MemoryError()
        with nogil:
            memcpy(signed, sp, 64)
            memcpy(signed + 64, view.buf, view.len)
            rc = _sodium_sign_open(signed + 64 + view.len, &opened, signed, 64 + view.len, kp)
            free(signed)
    finally:
        PyBuffer_Release(&view)
    return rc == 0
