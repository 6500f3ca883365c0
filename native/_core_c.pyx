# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Native twin of ``ajpcore._core_py``: same functions, same order, same bytes, same errors.

The hot paths of ajpcore: RFC 8785 canonical encoding (here), and, in the
sections below it, strict decoding, the streaming HMAC sink and Ed25519 byte
checks.  Errors are the classes of ``ajpcore.errors``; their text and JSON
paths are built by the same Python helpers the pure twin uses.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_Keys, PyDict_GetItemWithError
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.mem cimport PyMem_Free
from cpython.object cimport PyObject
from cpython.ref cimport Py_XDECREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.stdlib cimport atoi
from libc.string cimport memcpy

from ajpcore.errors import EncodeError, format_path
from ajpcore._core_py import _format_int as _py_format_int  # rare path: ints beyond 2**53

cdef extern from "Python.h":
    ctypedef struct PyBytesObject
    int _PyBytes_Resize(PyObject **bytes, Py_ssize_t newsize) except -1
    PyObject* PyBytes_FromStringAndSize_raw "PyBytes_FromStringAndSize" (const char *v, Py_ssize_t n) except NULL
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags, int *ptype) except NULL
    bint PyUnicode_IS_ASCII(object o)
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    int PyUnicode_1BYTE_KIND
    int PyUnicode_2BYTE_KIND
    bint PyUnicode_Check(object o)
    bint PyUnicode_CheckExact(object o)
    bint PyLong_CheckExact(object o)
    bint PyLong_Check(object o)
    bint PyFloat_CheckExact(object o)
    bint PyFloat_Check(object o)
    double PyFloat_AS_DOUBLE(object o)
    bint PyDict_CheckExact(object o)
    bint PyDict_Check(object o)
    bint PyList_CheckExact(object o)
    bint PyList_Check(object o)
    bint PyTuple_CheckExact(object o)
    bint PyTuple_Check(object o)
    bint PyBool_Check(object o)
    Py_ssize_t PyDict_GET_SIZE(object o)

cdef extern from "math.h":
    bint isfinite(double x) nogil

cdef enum:
    _MAX_DEPTH = 512

MAX_DEPTH = _MAX_DEPTH
"""Deepest nesting of containers ``canonicalize`` accepts (``[]`` has depth 1)."""

cdef long long _MAX_SAFE_INT = 9007199254740991LL


# ---------------------------------------------------------------------------
# Canonical JSON (RFC 8785)
# ---------------------------------------------------------------------------

# Per byte < 0x80: 0 = copy as is, 1 = short escape, 2 = \u00xx escape (ECMA-262 QuoteJSONString).
cdef unsigned char _ESC[128]
cdef char _SHORT[128]
cdef const char* _HEX = b"0123456789abcdef"


cdef void _init_tables():
    cdef int c
    for c in range(128):
        _ESC[c] = 0
        _SHORT[c] = 0
    for c in range(0x20):
        _ESC[c] = 2
    for c, s in ((8, b'b'), (9, b't'), (10, b'n'), (12, b'f'), (13, b'r'), (34, b'"'), (92, b'\\')):
        _ESC[c] = 1
        _SHORT[c] = (<char*>s)[0]


_init_tables()


cdef struct Step:
    PyObject* key      # borrowed: kept alive by the frame's key list; NULL for an index
    Py_ssize_t index


cdef class _Writer:
    """Output buffer: one bytes object filled in place.

    Unbounded (``chunk == 0``): grows by doubling and is shrunk to size at the end.
    Streaming: holds at most ``chunk`` bytes; a full buffer is handed to ``write``
    as is and a fresh one started, so no copy of the output is ever made.
    """

    cdef PyObject* buf
    cdef char* data
    cdef Py_ssize_t length
    cdef Py_ssize_t cap
    cdef Py_ssize_t chunk
    cdef Py_ssize_t total
    cdef object write
    cdef Step steps[_MAX_DEPTH + 1]
    cdef int depth

    def __cinit__(self):
        self.buf = NULL
        self.data = NULL
        self.length = 0
        self.depth = 0
        self.total = 0

    def __dealloc__(self):
        Py_XDECREF(self.buf)

    cdef int start(self, Py_ssize_t cap, Py_ssize_t chunk, object write) except -1:
        self.buf = PyBytes_FromStringAndSize_raw(NULL, cap)
        self.data = PyBytes_AS_STRING(<object>self.buf)
        self.cap = cap
        self.chunk = chunk
        self.write = write
        return 0

    cdef int flush(self, bint more=True) except -1:
        """Streaming: hand the filled bytes object over and, if ``more``, start a new one."""
        cdef PyObject* full
        if self.length == 0:
            return 0
        if self.length != self.cap:
            _PyBytes_Resize(&self.buf, self.length)
        full = self.buf
        self.buf = NULL
        self.data = NULL
        self.total += self.length
        self.length = 0
        try:
            self.write(<object>full)
        finally:
            Py_XDECREF(full)
        if not more:
            return 0
        self.buf = PyBytes_FromStringAndSize_raw(NULL, self.chunk)
        self.data = PyBytes_AS_STRING(<object>self.buf)
        self.cap = self.chunk
        return 0

    cdef int grow(self, Py_ssize_t need) except -1:
        cdef Py_ssize_t cap = self.cap
        while cap - self.length < need:
            cap = cap * 2
        _PyBytes_Resize(&self.buf, cap)
        self.data = PyBytes_AS_STRING(<object>self.buf)
        self.cap = cap
        return 0

    cdef inline int put(self, const char* src, Py_ssize_t n) except -1:
        cdef Py_ssize_t room
        if self.cap - self.length >= n:
            memcpy(self.data + self.length, src, n)
            self.length += n
            return 0
        if self.chunk == 0:
            self.grow(n)
            memcpy(self.data + self.length, src, n)
            self.length += n
            return 0
        while n > 0:
            room = self.cap - self.length
            if room == 0:
                self.flush()
                room = self.cap
            if room > n:
                room = n
            memcpy(self.data + self.length, src, room)
            self.length += room
            src += room
            n -= room
        return 0

    cdef inline int put_char(self, char c) except -1:
        if self.length < self.cap:
            self.data[self.length] = c
            self.length += 1
            return 0
        return self.put(&c, 1)

    cdef object finish(self):
        """Unbounded mode: the output as bytes."""
        cdef object result
        _PyBytes_Resize(&self.buf, self.length)
        result = <object>self.buf
        Py_XDECREF(self.buf)
        self.buf = NULL
        return result

    cdef str path(self):
        steps = []
        cdef int i
        for i in range(self.depth):
            if self.steps[i].key == NULL:
                steps.append(self.steps[i].index)
            else:
                steps.append(<object>self.steps[i].key)
        return format_path(steps)

    cdef int fail(self, str reason) except -1:
        raise EncodeError(reason, self.path())

    # -- strings -----------------------------------------------------------

    cdef int put_str(self, object s) except -1:
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s)
        cdef int kind = PyUnicode_KIND(s)
        cdef void* raw = PyUnicode_DATA(s)
        cdef const unsigned char* p1
        cdef const unsigned short* p2
        cdef const unsigned int* p4
        cdef Py_ssize_t i, run
        cdef unsigned int c
        self.put_char(b'"')
        if kind == PyUnicode_1BYTE_KIND:
            p1 = <const unsigned char*>raw
            run = 0
            i = 0
            while i < n:
                c = p1[i]
                if c < 0x80 and _ESC[c] == 0:
                    i += 1
                    continue
                if i > run:
                    self.put(<const char*>p1 + run, i - run)
                self.put_code(c)
                i += 1
                run = i
            if n > run:
                self.put(<const char*>p1 + run, n - run)
        elif kind == PyUnicode_2BYTE_KIND:
            p2 = <const unsigned short*>raw
            for i in range(n):
                c = p2[i]
                if c < 0x80 and _ESC[c] == 0:
                    self.put_char(<char>c)
                else:
                    self.put_code(c)
        else:
            p4 = <const unsigned int*>raw
            for i in range(n):
                c = p4[i]
                if c < 0x80 and _ESC[c] == 0:
                    self.put_char(<char>c)
                else:
                    self.put_code(c)
        self.put_char(b'"')
        return 0

    cdef int put_code(self, unsigned int c) except -1:
        """One code point that is not a plain ASCII character: escape or UTF-8."""
        cdef char tmp[6]
        if c < 0x80:
            if _ESC[c] == 1:
                tmp[0] = b'\\'
                tmp[1] = _SHORT[c]
                return self.put(tmp, 2)
            tmp[0] = b'\\'
            tmp[1] = b'u'
            tmp[2] = b'0'
            tmp[3] = b'0'
            tmp[4] = _HEX[c >> 4]
            tmp[5] = _HEX[c & 15]
            return self.put(tmp, 6)
        if c < 0x800:
            tmp[0] = <char>(0xC0 | (c >> 6))
            tmp[1] = <char>(0x80 | (c & 0x3F))
            return self.put(tmp, 2)
        if c < 0x10000:
            if 0xD800 <= c <= 0xDFFF:
                self.fail("String contains a lone surrogate")
            tmp[0] = <char>(0xE0 | (c >> 12))
            tmp[1] = <char>(0x80 | ((c >> 6) & 0x3F))
            tmp[2] = <char>(0x80 | (c & 0x3F))
            return self.put(tmp, 3)
        tmp[0] = <char>(0xF0 | (c >> 18))
        tmp[1] = <char>(0x80 | ((c >> 12) & 0x3F))
        tmp[2] = <char>(0x80 | ((c >> 6) & 0x3F))
        tmp[3] = <char>(0x80 | (c & 0x3F))
        return self.put(tmp, 4)

    # -- numbers -----------------------------------------------------------

    cdef int put_ll(self, long long v) except -1:
        cdef char tmp[24]
        cdef int pos = 24
        cdef unsigned long long u
        cdef bint neg = v < 0
        u = <unsigned long long>(-v) if neg else <unsigned long long>v
        while True:
            pos -= 1
            tmp[pos] = <char>(48 + u % 10)
            u //= 10
            if u == 0:
                break
        if neg:
            pos -= 1
            tmp[pos] = b'-'
        return self.put(tmp + pos, 24 - pos)

    cdef int put_double(self, double x) except -1:
        """ECMAScript Number::toString of a finite double (RFC 8785 §3.2.2.3).

        PyOS_double_to_string 'r' gives the shortest round-trip digits, which
        are ECMAScript's digits; only the layout is redone (ECMA-262 7.1.12.1).
        """
        cdef char* r
        cdef char digits[32]
        cdef char out[40]
        cdef int k = 0, n = 0, exp10 = 0, int_len = 0, e, i, o = 0, lead
        cdef bint seen_point = False, neg = False
        cdef const char* p
        if x == 0.0:
            return self.put_char(b'0')
        if -9007199254740991.0 <= x <= 9007199254740991.0 and x == <double>(<long long>x):
            return self.put_ll(<long long>x)
        r = PyOS_double_to_string(x, b'r', 0, 0, NULL)
        try:
            p = r
            if p[0] == b'-':
                neg = True
                p += 1
            while p[0] != 0 and p[0] != b'e':
                if p[0] == b'.':
                    seen_point = True
                else:
                    digits[k] = p[0]
                    k += 1
                    if not seen_point:
                        int_len += 1
                p += 1
            if p[0] == b'e':
                exp10 = atoi(p + 1)
        finally:
            PyMem_Free(r)
        n = int_len + exp10
        # strip leading zeros (0.00123) and trailing zeros (1200 / 1.50)
        lead = 0
        while lead < k - 1 and digits[lead] == b'0':
            lead += 1
        n -= lead
        while k > lead + 1 and digits[k - 1] == b'0':
            k -= 1
        p = digits + lead
        k -= lead
        if neg:
            out[o] = b'-'
            o += 1
        if k <= n <= 21:
            memcpy(out + o, p, k)
            o += k
            for i in range(n - k):
                out[o] = b'0'
                o += 1
        elif 0 < n <= 21:
            memcpy(out + o, p, n)
            o += n
            out[o] = b'.'
            o += 1
            memcpy(out + o, p + n, k - n)
            o += k - n
        elif -6 < n <= 0:
            out[o] = b'0'
            out[o + 1] = b'.'
            o += 2
            for i in range(-n):
                out[o] = b'0'
                o += 1
            memcpy(out + o, p, k)
            o += k
        else:
            e = n - 1
            out[o] = p[0]
            o += 1
            if k > 1:
                out[o] = b'.'
                o += 1
                memcpy(out + o, p + 1, k - 1)
                o += k - 1
            out[o] = b'e'
            out[o + 1] = b'+' if e >= 0 else b'-'
            o += 2
            self.put(out, o)
            return self.put_ll(e if e >= 0 else -e)
        return self.put(out, o)

    cdef int put_int(self, object v) except -1:
        cdef int overflow = 0
        cdef long long n = PyLong_AsLongLongAndOverflow(v, &overflow)
        cdef bytes text
        if overflow == 0 and -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT:
            return self.put_ll(n)
        text = _py_format_int(int(v), self.path).encode('ascii')
        return self.put(PyBytes_AS_STRING(text), len(text))

    # -- values ------------------------------------------------------------

    cdef int put_value(self, object v) except -1:
        cdef double x
        if PyUnicode_CheckExact(v):
            return self.put_str(v)
        if PyLong_CheckExact(v):
            return self.put_int(v)
        if PyFloat_CheckExact(v):
            x = PyFloat_AS_DOUBLE(v)
            if not isfinite(x):
                self.fail(f"Non-finite float `{float.__repr__(v)}` has no JSON form")
            return self.put_double(x)
        if PyDict_Check(v):
            return self.put_dict(v)
        if PyList_Check(v) or PyTuple_Check(v):
            return self.put_array(v)
        if v is None:
            return self.put(b"null", 4)
        if v is True:
            return self.put(b"true", 4)
        if v is False:
            return self.put(b"false", 5)
        if PyUnicode_Check(v):
            return self.put_str(v)
        if PyLong_Check(v):
            return self.put_int(v)
        if PyFloat_Check(v):
            x = PyFloat_AS_DOUBLE(v)
            if not isfinite(x):
                self.fail(f"Non-finite float `{float.__repr__(float(v))}` has no JSON form")
            return self.put_double(x)
        self.fail(f"Unsupported type `{type(v).__qualname__}`")

    cdef int put_dict(self, object d) except -1:
        cdef list keys
        cdef Py_ssize_t i, n
        cdef bint ascii_only = True
        cdef PyObject* item
        cdef object k, val
        if self.depth >= _MAX_DEPTH:
            self.fail(f"Nesting deeper than {_MAX_DEPTH}")
        n = PyDict_GET_SIZE(d)
        if n == 0:
            return self.put(b"{}", 2)
        keys = PyDict_Keys(d)
        n = PyList_GET_SIZE(keys)
        for i in range(n):
            k = <object>PyList_GET_ITEM(keys, i)
            if not PyUnicode_Check(k):
                self.fail(f"Object key must be `str`, got `{type(k).__qualname__}`")
            if not PyUnicode_IS_ASCII(k):
                ascii_only = False
        if n > 1:
            if ascii_only:
                keys.sort()
            else:
                # RFC 8785 §3.2.3: member names sort by their UTF-16 code units.
                keys.sort(key=_utf16_key)
        self.put_char(b'{')
        self.depth += 1
        for i in range(n):
            k = <object>PyList_GET_ITEM(keys, i)
            self.steps[self.depth - 1].key = <PyObject*>k
            if i:
                self.put_char(b',')
            self.put_str(k)
            self.put_char(b':')
            item = PyDict_GetItemWithError(d, k)
            if item == NULL:
                self.fail("Object changed while it was being encoded")
            val = <object>item  # a strong reference: `write` may mutate the dict
            self.put_value(val)
        self.depth -= 1
        return self.put_char(b'}')

    cdef int put_array(self, object a) except -1:
        cdef Py_ssize_t i
        cdef bint is_list = PyList_Check(a)
        cdef object item
        if self.depth >= _MAX_DEPTH:
            self.fail(f"Nesting deeper than {_MAX_DEPTH}")
        if len(a) == 0:
            return self.put(b"[]", 2)
        self.put_char(b'[')
        self.depth += 1
        self.steps[self.depth - 1].key = NULL
        i = 0
        while True:
            # Re-read the size each time: a streaming write callback may mutate the list.
            if is_list:
                if i >= PyList_GET_SIZE(a):
                    break
                item = <object>PyList_GET_ITEM(a, i)
            else:
                if i >= PyTuple_GET_SIZE(a):
                    break
                item = <object>PyTuple_GET_ITEM(a, i)
            self.steps[self.depth - 1].index = i
            if i:
                self.put_char(b',')
            self.put_value(item)
            i += 1
        self.depth -= 1
        return self.put_char(b']')


def _utf16_key(str key):
    return key.encode("utf-16-be", "surrogatepass")


def canonicalize(value):
    """RFC 8785 canonical JSON of ``value`` as UTF-8 bytes (see ajpcore._core_py.canonicalize)."""
    cdef _Writer w = _Writer()
    w.start(256, 0, None)
    w.put_value(value)
    return w.finish()


def canonicalize_into(value, write, *, chunk_size=65536):
    """Hand the canonical bytes of ``value`` to ``write`` in chunks of at most ``chunk_size``."""
    if type(chunk_size) is not int or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    cdef _Writer w = _Writer()
    w.start(chunk_size, chunk_size, write)
    w.put_value(value)
    w.flush(False)
    return w.total


# ---------------------------------------------------------------------------
# Strict decoding (RFC 8259 + I-JSON, RFC 7493)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Streaming HMAC-SHA256 (RFC 2104 over OpenSSL's SHA-256 from hashlib)
# ---------------------------------------------------------------------------

import threading as _threading
from hashlib import sha256 as _sha256
from hmac import compare_digest as _compare_digest

from ajpcore.errors import BadSignature, KeyFormatError, KeyUsageError, SignerFinalized

# Keyed states of recently used secrets: see the pure twin for why caching them is acceptable.
HMAC_CACHE_SIZE = 32
"""How many secrets ``HmacSigner`` keeps keyed SHA-256 states for (oldest evicted first)."""

cdef enum:
    _HMAC_BLOCK = 64  # SHA-256 block size in bytes (RFC 2104 §2: B)
    _HMAC_TAG_SIZE = 32
cdef bytes _IPAD = bytes([x ^ 0x36 for x in range(256)])
cdef bytes _OPAD = bytes([x ^ 0x5C for x in range(256)])
cdef dict _hmac_cache = {}
_hmac_cache_lock = _threading.Lock()


cdef tuple _hmac_keyed_states(object secret):
    """The (inner, outer) SHA-256 states keyed with ``secret``, from the cache when present."""
    cdef object states, key, cache_key
    t = type(secret)
    if t is str or t is bytes:
        states = _hmac_cache.get(secret)
        if states is not None:
            return <tuple>states
        cache_key = secret
        key = secret if t is bytes else _utf8_secret(secret)
    elif isinstance(secret, str):
        # A subclass may redefine hashing and equality: key the cache by plain bytes.
        key = cache_key = _utf8_secret(str.__str__(secret))
    elif isinstance(secret, (bytes, bytearray, memoryview)):
        key = cache_key = bytes(secret)
    else:
        raise KeyUsageError(f"HMAC secret must be `bytes` or `str`, got `{type(secret).__qualname__}`")
    if cache_key is not secret:
        states = _hmac_cache.get(cache_key)
        if states is not None:
            return <tuple>states
    # RFC 2104 §2: a key longer than the block is hashed first, then zero-padded to B bytes.
    if len(key) > _HMAC_BLOCK:
        key = _sha256(key).digest()
    key = key.ljust(_HMAC_BLOCK, b"\0")
    states = (_sha256(key.translate(_IPAD)), _sha256(key.translate(_OPAD)))
    with _hmac_cache_lock:
        if len(_hmac_cache) >= HMAC_CACHE_SIZE:
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


# ---------------------------------------------------------------------------
# Ed25519 byte-level checks (RFC 8032 encodings; strict policy)
# ---------------------------------------------------------------------------

from ajpcore.errors import BadSignature, KeyFormatError, MalformedSignature, WeakKey
from libc.string cimport memcmp

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
