# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/offer_shape.py.
#
# What the AJP specification fixes of a JobOffer, checked in one pass.  These functions only prove:
# a result means the offer passes; None means "not proven here", and the receive pipeline then runs
# the schema engine and the rules, which decide and explain (see the twin's docstring).

from cpython.dict cimport PyDict_GetItem
from cpython.object cimport Py_GE, PyObject_RichCompareBool
from cpython.set cimport PySet_Contains
from libc.math cimport floor

cdef extern from "Python.h":
    bint PyFrozenSet_CheckExact(object o)

cdef extern from *:
    """
    /* RFC 3986 section 2: unreserved and sub-delims (what a reg-name and a pchar share). */
    static inline int ajp_uri_plain(unsigned c) {
        return (c - 'a' < 26u) || (c - 'A' < 26u) || (c - '0' < 10u) || c == '-' || c == '.' || c == '_'
            || c == '~' || c == '!' || c == '$' || c == '&' || c == '\\'' || c == '(' || c == ')' || c == '*'
            || c == '+' || c == ',' || c == ';' || c == '=';
    }

    static inline int ajp_uri_hex(unsigned c) {
        return (c - '0' < 10u) || ((c | 0x20) - 'a' < 6u);
    }

    /* The end of a run of pchar and '/' (and '?' when `query`) from s[i], or -1 at a bad "%XX". */
    static Py_ssize_t ajp_uri_run(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, int query) {
        while (i < n) {
            unsigned c = s[i];
            if (ajp_uri_plain(c) || c == ':' || c == '@' || c == '/' || (query && c == '?')) {
                i++;
            } else if (c == '%') {
                if (i + 2 >= n || !ajp_uri_hex(s[i + 1]) || !ajp_uri_hex(s[i + 2])) return -1;
                i += 3;
            } else {
                break;
            }
        }
        return i;
    }

    /* Whether s[0..n) (ASCII) is an RFC 3986 URI of the proven form: scheme ":" then "//" reg-name
       [":" port] path-abempty, or a path not starting "//"; then [ "?" query ] [ "#" fragment ].
       No userinfo, no IP literal: those are left to the schema engine (0 is "not proven"). */
    static int ajp_uri_proven(const unsigned char *s, Py_ssize_t n) {
        Py_ssize_t i = 1;
        if (n == 0 || ((unsigned)(s[0] | 0x20) - 'a' >= 26u)) return 0;
        while (i < n && ((unsigned)(s[i] | 0x20) - 'a' < 26u || (unsigned)s[i] - '0' < 10u
                         || s[i] == '+' || s[i] == '-' || s[i] == '.')) i++;
        if (i >= n || s[i] != ':') return 0;
        i++;
        if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
            i += 2;
            while (i < n) {
                if (ajp_uri_plain(s[i])) {
                    i++;
                } else if (s[i] == '%') {
                    if (i + 2 >= n || !ajp_uri_hex(s[i + 1]) || !ajp_uri_hex(s[i + 2])) return 0;
                    i += 3;
                } else {
                    break;
                }
            }
            if (i < n && s[i] == ':') {
                i++;
                while (i < n && (unsigned)s[i] - '0' < 10u) i++;
            }
            if (i < n && s[i] != '/' && s[i] != '?' && s[i] != '#') return 0;
        }
        i = ajp_uri_run(s, n, i, 0);
        if (i >= 0 && i < n && s[i] == '?') i = ajp_uri_run(s, n, i + 1, 1);
        if (i >= 0 && i < n && s[i] == '#') i = ajp_uri_run(s, n, i + 1, 1);
        return i == n;
    }

    /* "^[0-9]+\\.[0-9]+$" (ECMA-262: `$` is the very end). */
    static int ajp_ajp_version(const unsigned char *s, Py_ssize_t n) {
        Py_ssize_t i = 0, start;
        while (i < n && (unsigned)s[i] - '0' < 10u) i++;
        if (i == 0 || i >= n || s[i] != '.') return 0;
        start = ++i;
        while (i < n && (unsigned)s[i] - '0' < 10u) i++;
        return i > start && i == n;
    }

    /* "^[a-z][a-z0-9_-]*:" */
    static int ajp_scheme_prefix(const unsigned char *s, Py_ssize_t n) {
        Py_ssize_t i = 1;
        if (n == 0 || (unsigned)s[0] - 'a' >= 26u) return 0;
        while (i < n && ((unsigned)s[i] - 'a' < 26u || (unsigned)s[i] - '0' < 10u || s[i] == '_' || s[i] == '-')) i++;
        return i < n && s[i] == ':';
    }
    """
    bint ajp_uri_proven(const unsigned char* s, Py_ssize_t n) noexcept
    bint ajp_ajp_version(const unsigned char* s, Py_ssize_t n) noexcept
    bint ajp_scheme_prefix(const unsigned char* s, Py_ssize_t n) noexcept

# ---------------------------------------------------------------------------
# The offer schema's fixed part (ajpcore/schemas/ajp-job-offer.schema.json)
# ---------------------------------------------------------------------------

cdef object _ZERO = 0
cdef object _ONE = 1


cdef extern from *:
    """
    /* d[name] borrowed, or NULL when absent (an error of a key's own comparison: not proven either). */
    static PyObject *ajp_offer_get(PyObject *d, PyObject *name) {
        PyObject *found = PyDict_GetItemWithError(d, name);
        if (found == NULL && PyErr_Occurred()) PyErr_Clear();
        return found;
    }
    """
    PyObject* _get "ajp_offer_get" (object d, object name)


cdef inline object _member(dict d, str name):
    """``d.get(name)`` (None when absent), one lookup."""
    cdef PyObject* found = _get(d, name)
    return None if found is NULL else <object>found


cdef inline bint _ascii_str(object v) except -1:
    if not PyUnicode_CheckExact(v):
        return False
    ajp_unicode_ready(v)
    return PyUnicode_IS_ASCII(v)


cdef inline bint _ascii_is(object v, const char* text, Py_ssize_t n) except -1:
    """``v == text`` for a str ``v`` and ASCII ``text`` of ``n`` bytes."""
    return _ascii_str(v) and PyUnicode_GET_LENGTH(v) == n and memcmp(PyUnicode_DATA(v), text, n) == 0


cdef inline bint _is_number(object v) noexcept:
    return PyLong_CheckExact(v) or PyFloat_CheckExact(v)  # JSON Schema "number" (a bool is not one)


cdef inline bint _at_least(object v, object bound, double fbound) except -1:
    """``v >= bound`` of a number, exact (an int compared as an int)."""
    if PyFloat_CheckExact(v):
        return PyFloat_AS_DOUBLE(v) >= fbound
    return PyObject_RichCompareBool(v, bound, Py_GE)


cdef inline bint _string_or_null(object v, Py_ssize_t max_length) except -1:
    if v is None:
        return True
    return PyUnicode_CheckExact(v) and (max_length < 0 or PyUnicode_GET_LENGTH(v) <= max_length)


cdef inline bint _uri(object v) except -1:
    return _ascii_str(v) and ajp_uri_proven(<const unsigned char*>PyUnicode_DATA(v), PyUnicode_GET_LENGTH(v))


cdef inline bint _nonempty_str(object v) noexcept:
    return PyUnicode_CheckExact(v) and PyUnicode_GET_LENGTH(v) >= 1


cdef bint _offer_sender(object sender) except -1:
    cdef dict d
    cdef object kind, url
    cdef PyObject* provenance_id
    cdef bint human
    if not PyDict_CheckExact(sender):
        return False
    d = <dict>sender
    kind = _member(d, "type")
    human = _ascii_is(kind, "human", 5)
    if not human and not _ascii_is(kind, "agent", 5) and not _ascii_is(kind, "orchestrator", 12):
        return False
    if not _string_or_null(_member(d, "id"), -1):
        return False
    url = _member(d, "declaration_url")
    if url is not None and not _uri(url):
        return False
    provenance_id = _get(d, "provenance_id")
    if human:
        return provenance_id is NULL or _string_or_null(<object>provenance_id, -1)
    return provenance_id is not NULL and _nonempty_str(<object>provenance_id)


cdef bint _offer_task(object task) except -1:
    cdef dict d
    cdef PyObject* found
    cdef object v
    if not PyDict_CheckExact(task):
        return False
    d = <dict>task
    if not _nonempty_str(_member(d, "type")) or not _nonempty_str(_member(d, "instruction")):
        return False
    found = _get(d, "input")
    if found is not NULL and not PyDict_CheckExact(<object>found):
        return False
    found = _get(d, "output_format")
    if found is not NULL:
        v = <object>found
        if not (_ascii_is(v, "json", 4) or _ascii_is(v, "text", 4) or _ascii_is(v, "markdown", 8)
                or _ascii_is(v, "html", 4) or _ascii_is(v, "any", 3)):
            return False
    return True


cdef bint _offer_context(object context) except -1:
    cdef dict d
    cdef PyObject* found
    cdef object constraints
    cdef Py_ssize_t i
    if not PyDict_CheckExact(context):
        return False
    d = <dict>context
    found = _get(d, "credentials")
    if found is not NULL and not PyDict_CheckExact(<object>found):
        return False
    found = _get(d, "memory")
    if found is not NULL and not PyList_CheckExact(<object>found):
        return False
    found = _get(d, "constraints")
    if found is not NULL:
        constraints = <object>found
        if not PyList_CheckExact(constraints):
            return False
        for i in range(PyList_GET_SIZE(constraints)):
            if not PyUnicode_CheckExact(<object>PyList_GET_ITEM(constraints, i)):
                return False
    return True


cdef bint _offer_budget(object budget) except -1:
    cdef dict d
    cdef PyObject* found
    cdef object bound
    if not PyDict_CheckExact(budget):
        return False
    d = <dict>budget
    bound = _member(d, "max_usd")
    if not _is_number(bound) or not _at_least(bound, _ZERO, 0.0):
        return False
    for name in ("max_seconds", "max_llm_tokens"):
        found = _get(d, name)
        if found is not NULL:
            bound = <object>found
            if not _is_number(bound) or not _at_least(bound, _ONE, 1.0):
                return False
    return True


cdef bint _offer_callback(object callback) except -1:
    cdef dict d
    cdef PyObject* found
    if callback is None:
        return True
    if not PyDict_CheckExact(callback):
        return False
    d = <dict>callback
    found = _get(d, "url")
    if found is NULL or not _uri(<object>found):
        return False
    found = _get(d, "headers")
    return found is NULL or PyDict_CheckExact(<object>found)


cdef bint _offer_instant(dict d, str name, long long* out) except -1:
    cdef object text = _member(d, name)
    return _ascii_str(text) and ajp_rfc3339_parse(<const unsigned char*>PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), out)


cdef bint _offer_schema(object value, long long* issued_us, long long* expires_us) except -1:
    """The twin's ``offer_schema_instants``: True and the two instants when proven."""
    cdef dict d
    cdef object v
    cdef PyObject* found
    if not PyDict_CheckExact(value):
        return False
    d = <dict>value
    v = _member(d, "ajp")
    if not _ascii_str(v) or not ajp_ajp_version(<const unsigned char*>PyUnicode_DATA(v), PyUnicode_GET_LENGTH(v)):
        return False
    v = _member(d, "job_id")
    if not PyUnicode_CheckExact(v) or not 8 <= PyUnicode_GET_LENGTH(v) <= 256:
        return False
    if not _string_or_null(_member(d, "parent_job_id"), 256):  # absent or null: allowed alike
        return False
    if not _offer_sender(_member(d, "from")):
        return False
    v = _member(d, "to")
    if not PyDict_CheckExact(v) or not _nonempty_str(_member(<dict>v, "provenance_id")):
        return False
    if not _offer_task(_member(d, "task")):
        return False
    found = _get(d, "context")
    if found is not NULL and not _offer_context(<object>found):
        return False
    if not _offer_budget(_member(d, "budget")):
        return False
    if not _offer_callback(_member(d, "callback")):  # absent or null: allowed alike
        return False
    if not _offer_instant(d, "issued_at", issued_us) or not _offer_instant(d, "expires_at", expires_us):
        return False
    v = _member(d, "signature")
    return _ascii_str(v) and ajp_scheme_prefix(<const unsigned char*>PyUnicode_DATA(v), PyUnicode_GET_LENGTH(v))


def offer_schema_instants(value):
    """``(issued_us, expires_us)`` of an offer proven valid under the shipped offer schema, else None
    (see ajpcore._core_py.offer_shape)."""
    cdef long long issued_us, expires_us
    if not _offer_schema(value, &issued_us, &expires_us):
        return None
    return (PyLong_FromLongLong(issued_us), PyLong_FromLongLong(expires_us))


# ---------------------------------------------------------------------------
# The shape step: schema, strict rules, recipient
# ---------------------------------------------------------------------------

cdef long long _OFFER_LIMIT = 4611686018427387904  # 2**62: every difference of two instants (years 0000-9999) is far inside


cdef bint _limit_us(object seconds, long long* out) except -1:
    """The twin's ``_limit_us``: False for NaN or a type other than int and float."""
    cdef int overflow
    cdef long long whole
    cdef double product
    if PyLong_CheckExact(seconds):
        whole = PyLong_AsLongLongAndOverflow(seconds, &overflow)
        if overflow > 0 or whole > _OFFER_LIMIT // 1000000:
            out[0] = _OFFER_LIMIT
        elif overflow < 0 or whole < -(_OFFER_LIMIT // 1000000):
            out[0] = -_OFFER_LIMIT
        else:
            out[0] = whole * 1000000
        return True
    if not PyFloat_CheckExact(seconds):
        return False
    product = PyFloat_AS_DOUBLE(seconds) * 1000000.0
    if product != product:
        return False
    if product >= <double>_OFFER_LIMIT:
        out[0] = _OFFER_LIMIT
    elif product <= -<double>_OFFER_LIMIT:
        out[0] = -_OFFER_LIMIT
    else:
        out[0] = <long long>floor(product)
    return True


def offer_accepted_expiry(value, now_us, skew, max_lifetime, recipients):
    """``expires_us`` of an offer the shape step accepts outright, else None (see
    ajpcore._core_py.offer_shape)."""
    cdef long long issued_us, expires_us, now, skew_us, lifetime_us
    cdef int overflow
    cdef object kind, signature
    if not _offer_schema(value, &issued_us, &expires_us) or not PyLong_CheckExact(now_us):
        return None
    now = PyLong_AsLongLongAndOverflow(now_us, &overflow)
    if overflow or not -_OFFER_LIMIT < now < _OFFER_LIMIT:
        return None
    if not _limit_us(skew, &skew_us) or not _limit_us(max_lifetime, &lifetime_us):
        return None
    if not (now <= expires_us and issued_us - now <= skew_us and issued_us < expires_us
            and expires_us - issued_us <= lifetime_us):
        return None
    kind = (<dict>value)["from"]["type"]
    signature = (<dict>value)["signature"]  # an ASCII str: the schema's pattern held
    if _ascii_is(kind, "human", 5):
        if not (PyUnicode_GET_LENGTH(signature) >= 7 and memcmp(PyUnicode_DATA(signature), b"sha256:", 7) == 0):
            return None
    elif not (PyUnicode_GET_LENGTH(signature) >= 8 and memcmp(PyUnicode_DATA(signature), b"ed25519:", 8) == 0):
        return None
    if recipients is not None:
        if not PyFrozenSet_CheckExact(recipients) or not PySet_Contains(recipients, (<dict>value)["to"]["provenance_id"]):
            return None
    return PyLong_FromLongLong(expires_us)
