# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/number_format.py.

# ---------------------------------------------------------------------------
# Number formatting (RFC 8785 §3.2.2.3, ECMA-262 Number::toString; Schubfach)
# ---------------------------------------------------------------------------

cdef extern from "number_format.h":
    void ajp_set_g(int e, unsigned long long hi, unsigned long long lo)
    void ajp_init_exponent_text()
    void ajp_init_kh()
    void ajp_init_pow5()
    int ajp_format_double(double x, char* out) nogil
    int ajp_format_i64(long long v, char* out) nogil
    bint ajp_long_value(PyObject* v, long long* out) nogil
    int ajp_put_safe_int(char* dst, Py_ssize_t room, PyObject* v) nogil
    Py_ssize_t ajp_put_numbers(PyObject** items, Py_ssize_t i, Py_ssize_t n, char* data, Py_ssize_t* length,
                               Py_ssize_t cap) nogil
    int ajp_put_number_list(PyObject* a, Py_ssize_t i, char* data, Py_ssize_t* length, Py_ssize_t cap) nogil
    PyObject** PySequence_Fast_ITEMS(object a)


cdef void _init_g_table():
    """Schubfach's 10^e overestimates (native/number_format.h, ajp_g), from exact integers."""
    cdef int e, beta
    cdef object g
    cdef unsigned long long mask = 0xFFFFFFFFFFFFFFFF
    for e in range(-292, 325):
        # beta = floor(log2(10^e)); g = floor(10^e * 2^(125 - beta)) + 1, in (2^125, 2^126]
        if e >= 0:
            beta = ((<object>10) ** e).bit_length() - 1
            g = (<object>10) ** e << (125 - beta) if beta <= 125 else (<object>10) ** e >> (beta - 125)
        else:
            beta = -((((<object>10) ** -e) - 1).bit_length())
            g = ((<object>1) << (125 - beta)) // (<object>10) ** -e
        ajp_set_g(e, (g + 1) >> 64, (g + 1) & mask)


_init_g_table()
ajp_init_exponent_text()
ajp_init_kh()
ajp_init_pow5()


cdef inline int _put_ll(Writer* w, long long v) except -1:
    """The decimal text of v, |v| <= 2**53 - 1 (ajp_format_i64 takes |v| < 10**16)."""
    cdef char out[32]
    if w.cap - w.length >= 32:
        w.length += ajp_format_i64(v, w.data + w.length)
        return 0
    return _w_put(w, out, ajp_format_i64(v, out))


cdef int _put_double(Writer* w, double x) except -1:
    """ECMAScript Number::toString of a finite double (RFC 8785 §3.2.2.3, ECMA-262 7.1.12.1)."""
    if w.cap - w.length >= 64:
        w.length += ajp_format_double(x, w.data + w.length)
        return 0
    return _w_put(w, w.number_text, ajp_format_double(x, w.number_text))


cdef inline int _put_float(Writer* w, object v) except -1:
    """An exact float: its ECMAScript text written inline, or the refusal of a non-finite one."""
    cdef double x = PyFloat_AS_DOUBLE(v)
    if not isfinite(x):
        return _fail_value(w, v)
    if w.cap - w.length >= 64:
        w.length += ajp_format_double(x, w.data + w.length)
        return 0
    return _put_double(w, x)


def _format_double(double x):
    """The native twin of ``_core_py._format_double`` (exposed for tests)."""
    cdef char out[64]
    if not isfinite(x):
        return float.__repr__(x)  # what the pure twin answers; ajp_format_double takes finite doubles
    return out[:ajp_format_double(x, out)].decode("ascii")


def _unlocated(): return "$"


cdef int _put_int(Writer* w, object v) except -1:
    cdef int overflow = 0
    cdef long long n
    cdef bytes text
    if ajp_long_value(<PyObject*>v, &n) and -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT:
        return _put_ll(w, n)
    # Where ints have 15-bit digits a safe int may take more than two of them.
    n = PyLong_AsLongLongAndOverflow(v, &overflow)
    if overflow == 0 and -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT:
        return _put_ll(w, n)
    _w_own(w)  # Python code runs (and may collect garbage) from here
    try:
        text = _rule_format_int(int.__index__(v), _unlocated).encode('ascii')
    except EncodeError as exc:
        _w_fail(w, exc.reason)
    return _w_put(w, PyBytes_AS_STRING(text), len(text))


cdef inline int _put_integer(Writer* w, object v) except -1:
    """``_put_int`` of an exact int, one within +-(2**53 - 1) written inline."""
    cdef int k = ajp_put_safe_int(w.data + w.length, w.cap - w.length, <PyObject*>v)
    if k:
        w.length += k
        return 0
    return _put_int(w, v)
