# Included by native/_core_c.pyx (shares its namespace), after decoder.pxi.  Native only: the
# number reader's Python side.  Pure twin: the number rule of ajpcore/_core_py/decoder.py.

# ---------------------------------------------------------------------------
# Numbers (RFC 8259 §6, RFC 7493 §2.2): the usual int or float is read inline by decoder.pxi's
# parse loop (ajpcore_scan_number, decoder_numbers.h); every other number, and every refusal,
# here, with the table of powers of five the Eisel-Lemire reader (ajpcore_parse_double) uses.
# ---------------------------------------------------------------------------

cdef extern from "Python.h":
    double PyOS_string_to_double(const char* s, char** endptr, PyObject* overflow_exception) except? -1.0

cdef extern from "math.h":
    bint isinf(double x) nogil

cdef extern from "decoder_numbers.h":
    enum:
        AJPCORE_POW5_MIN
        AJPCORE_POW5_MAX
    unsigned long long ajpcore_pow5_128[651][2]  # AJPCORE_POW5_MAX - AJPCORE_POW5_MIN + 1
    int _parse_double "ajpcore_parse_double" (const unsigned char* p, Py_ssize_t i, Py_ssize_t end, double* out) nogil
    Py_ssize_t _scan_number "ajpcore_scan_number" (const unsigned char* p, Py_ssize_t i, Py_ssize_t n, long long* out, double* fout, int* is_float) nogil
    bint _literal_at "ajpcore_literal_at" (const unsigned char* p, const char* word, Py_ssize_t size) nogil


cdef void _init_pow5_128():
    """5^q for the Eisel-Lemire reader, from exact integers: for q >= 0 its top 128 bits; for
    q < 0 the top 128 bits of 2^b / 5^-q, rounded up (so the product errs in one direction)."""
    cdef object q, v, p5  # Python ints: 5^342 does not fit a C type
    for q in range(AJPCORE_POW5_MIN, AJPCORE_POW5_MAX + 1):
        if q >= 0:
            v = 5 ** q
            v = v << (128 - v.bit_length()) if v.bit_length() <= 128 else v >> (v.bit_length() - 128)
        else:
            p5 = 5 ** -q
            z = (p5 - 1).bit_length()  # the least z with 2^z >= 5^-q
            if q >= -27:
                v = (1 << (z + 127)) // p5 + 1
            else:
                v = (1 << (2 * z + 128)) // p5 + 1
                v >>= max(0, v.bit_length() - 128)
        ajpcore_pow5_128[q - AJPCORE_POW5_MIN][0] = v >> 64
        ajpcore_pow5_128[q - AJPCORE_POW5_MIN][1] = v & 0xFFFFFFFFFFFFFFFF


_init_pow5_128()


cdef object _parse_any_number(Parser* self, Py_ssize_t start):
    """``parse_number`` of every other number, and the refusals."""
    cdef const unsigned char* p = self.p
    cdef Py_ssize_t n = self.n
    cdef Py_ssize_t i = start, size, k
    cdef bint negative = False, is_int = True
    cdef long long v = 0
    cdef char small[64]
    cdef char* text
    cdef double x
    cdef unsigned char c
    if p[i] == 0x2D:
        negative = True
        i += 1
    if i >= n:
        _eof(self)
    c = p[i]
    if c == 0x30:
        i += 1
        if i < n and 0x30 <= p[i] <= 0x39:
            _fail(self, "leading zeros are not allowed", i)
    elif 0x31 <= c <= 0x39:
        while i < n and 0x30 <= p[i] <= 0x39:
            i += 1
    else:
        _fail(self, "invalid number", i)
    if i < n and p[i] == 0x2E:
        i = _digits_after(self, i + 1)
        is_int = False
    if i < n and (p[i] == 0x65 or p[i] == 0x45):
        i += 1
        if i < n and (p[i] == 0x2B or p[i] == 0x2D):
            i += 1
        i = _digits_after(self, i)
        is_int = False
    self.i = i
    size = i - start
    if is_int:
        if size - negative <= 18:  # fits a long long
            for k in range(start + negative, i):
                v = v * 10 + (p[k] - 0x30)
            if v <= _MAX_SAFE_INT:
                return PyLong_FromLongLong(-v if negative else v)
            # The int rule's first case in C: the literal is its own double.
            x = <double>v  # correctly rounded, as float(int) is
            if x < 9.2e18 and <long long>x == v:
                return PyLong_FromLongLong(-v if negative else v)
        try:
            return _decode_big_int(PyBytes_FromStringAndSize(<const char*>p + start, size))
        except _Refusal as exc:
            _fail(self, str(exc), start)
    # float(text) exactly: the correctly rounded binary64, read directly when that is
    # decidable (ajpcore_parse_double), else by the conversion CPython's float() uses.
    if _parse_double(p, start, i, &x):
        return PyFloat_FromDouble(x)
    if size < 64:
        memcpy(small, p + start, size)
        small[size] = 0
        x = PyOS_string_to_double(small, NULL, NULL)
    else:
        text = <char*>PyMem_Malloc(size + 1)
        if text == NULL:
            raise MemoryError()
        try:
            memcpy(text, p + start, size)
            text[size] = 0
            x = PyOS_string_to_double(text, NULL, NULL)
        finally:
            PyMem_Free(text)
    if isinf(x):
        # RFC 7493 §2.2: the value must fit binary64.
        _fail(self, "number out of range for binary64", start)
    return PyFloat_FromDouble(x)

cdef Py_ssize_t _digits_after(Parser* self, Py_ssize_t i) except -1:
    cdef const unsigned char* p = self.p
    cdef Py_ssize_t n = self.n
    if i >= n:
        _eof(self)
    if not (0x30 <= p[i] <= 0x39):
        _fail(self, "invalid number", i)
    i += 1
    while i < n and 0x30 <= p[i] <= 0x39:
        i += 1
    return i
