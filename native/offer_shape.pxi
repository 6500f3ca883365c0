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
    /* The members each object of the offer has names for (the slots ajp_offer_members fills, in this order). */
    typedef struct { Py_ssize_t length; const char *text; } ajp_offer_name;
    #define AJP_NAME(s) {sizeof(s) - 1, s}
    static const ajp_offer_name ajp_offer_names[] = {
        AJP_NAME("ajp"), AJP_NAME("job_id"), AJP_NAME("parent_job_id"), AJP_NAME("from"), AJP_NAME("to"),
        AJP_NAME("task"), AJP_NAME("context"), AJP_NAME("budget"), AJP_NAME("callback"), AJP_NAME("issued_at"),
        AJP_NAME("expires_at"), AJP_NAME("signature"),                                      /* the offer: 0-11 */
        AJP_NAME("type"), AJP_NAME("id"), AJP_NAME("provenance_id"), AJP_NAME("declaration_url"),  /* from: 12-15 */
        AJP_NAME("provenance_id"),                                                          /* to: 16 */
        AJP_NAME("type"), AJP_NAME("instruction"), AJP_NAME("input"), AJP_NAME("output_format"),  /* task: 17-20 */
        AJP_NAME("credentials"), AJP_NAME("memory"), AJP_NAME("constraints"),              /* context: 21-23 */
        AJP_NAME("max_usd"), AJP_NAME("max_seconds"), AJP_NAME("max_llm_tokens"),           /* budget: 24-26 */
        AJP_NAME("url"), AJP_NAME("headers"),                                               /* callback: 27-28 */
    };
    enum { AJP_OFFER = 0, AJP_SENDER = 12, AJP_RECIPIENT = 16, AJP_TASK = 17, AJP_CONTEXT = 21, AJP_BUDGET = 24,
           AJP_CALLBACK = 27, AJP_NAMES_END = 29 };

    /* One pass over the object `d` (PyDict_Next): slots[i] = the value of the member named
       ajp_offer_names[first + i] (i < count), borrowed, or NULL when absent.  A walk of the members costs
       less than a lookup by name each (a name the decoder made is never the very object of the name
       asked for, so every lookup also compares the texts).  0 for a member name that is not an exact
       str (the schema engine cannot read it: not proven); -1 with an exception. */
    static int ajp_offer_members(PyObject *d, int first, int count, PyObject **slots) {
        Py_ssize_t pos = 0, length;
        PyObject *key, *value;
        const char *text;
        int i;
        for (i = 0; i < count; i++) slots[i] = NULL;
        while (PyDict_Next(d, &pos, &key, &value)) {
            if (!PyUnicode_CheckExact(key)) return 0;
    #if PY_VERSION_HEX < 0x030C0000
            if (PyUnicode_READY(key) < 0) return -1;
    #endif
            if (!PyUnicode_IS_ASCII(key)) continue;  /* no name asked for is one */
            length = PyUnicode_GET_LENGTH(key);
            text = (const char *)PyUnicode_DATA(key);
            for (i = 0; i < count; i++) {
                const ajp_offer_name *name = &ajp_offer_names[first + i];
                if (name->length == length && name->text[0] == text[0] && memcmp(name->text, text, (size_t)length) == 0) {
                    slots[i] = value;
                    break;
                }
            }
        }
        return 1;
    }
    """
    int _members "ajp_offer_members" (object d, int first, int count, PyObject** slots) except -1
    enum:
        AJP_OFFER
        AJP_SENDER
        AJP_RECIPIENT
        AJP_TASK
        AJP_CONTEXT
        AJP_BUDGET
        AJP_CALLBACK


cdef inline object _value(PyObject* slot):
    """A slot's member, None when absent (where absent and null are alike to the schema)."""
    return None if slot is NULL else <object>slot


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
    cdef PyObject* slots[4]  # type, id, provenance_id, declaration_url
    cdef object kind, url
    cdef bint human
    if not PyDict_CheckExact(sender) or not _members(sender, AJP_SENDER, 4, slots):
        return False
    kind = _value(slots[0])
    human = _ascii_is(kind, "human", 5)
    if not human and not _ascii_is(kind, "agent", 5) and not _ascii_is(kind, "orchestrator", 12):
        return False
    if not _string_or_null(_value(slots[1]), -1):
        return False
    url = _value(slots[3])
    if url is not None and not _uri(url):
        return False
    if human:
        return _string_or_null(_value(slots[2]), -1)
    return slots[2] is not NULL and _nonempty_str(<object>slots[2])


cdef bint _offer_task(object task) except -1:
    cdef PyObject* slots[4]  # type, instruction, input, output_format
    cdef object v
    if not PyDict_CheckExact(task) or not _members(task, AJP_TASK, 4, slots):
        return False
    if not _nonempty_str(_value(slots[0])) or not _nonempty_str(_value(slots[1])):
        return False
    if slots[2] is not NULL and not PyDict_CheckExact(<object>slots[2]):
        return False
    if slots[3] is not NULL:
        v = <object>slots[3]
        if not (_ascii_is(v, "json", 4) or _ascii_is(v, "text", 4) or _ascii_is(v, "markdown", 8)
                or _ascii_is(v, "html", 4) or _ascii_is(v, "any", 3)):
            return False
    return True


cdef bint _offer_context(object context) except -1:
    cdef PyObject* slots[3]  # credentials, memory, constraints
    cdef object constraints
    cdef Py_ssize_t i
    if not PyDict_CheckExact(context) or not _members(context, AJP_CONTEXT, 3, slots):
        return False
    if slots[0] is not NULL and not PyDict_CheckExact(<object>slots[0]):
        return False
    if slots[1] is not NULL and not PyList_CheckExact(<object>slots[1]):
        return False
    if slots[2] is not NULL:
        constraints = <object>slots[2]
        if not PyList_CheckExact(constraints):
            return False
        for i in range(PyList_GET_SIZE(constraints)):
            if not PyUnicode_CheckExact(<object>PyList_GET_ITEM(constraints, i)):
                return False
    return True


cdef bint _offer_budget(object budget) except -1:
    cdef PyObject* slots[3]  # max_usd, max_seconds, max_llm_tokens
    cdef object bound
    cdef int i
    if not PyDict_CheckExact(budget) or not _members(budget, AJP_BUDGET, 3, slots):
        return False
    bound = _value(slots[0])
    if not _is_number(bound) or not _at_least(bound, _ZERO, 0.0):
        return False
    for i in range(1, 3):
        if slots[i] is not NULL:
            bound = <object>slots[i]
            if not _is_number(bound) or not _at_least(bound, _ONE, 1.0):
                return False
    return True


cdef bint _offer_callback(object callback) except -1:
    cdef PyObject* slots[2]  # url, headers
    if callback is None:
        return True
    if not PyDict_CheckExact(callback) or not _members(callback, AJP_CALLBACK, 2, slots):
        return False
    if slots[0] is NULL or not _uri(<object>slots[0]):
        return False
    return slots[1] is NULL or PyDict_CheckExact(<object>slots[1])


cdef bint _offer_instant(object text, long long* out) except -1:
    return _ascii_str(text) and ajp_rfc3339_parse(<const unsigned char*>PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), out)


cdef bint _offer_schema(object value, long long* issued_us, long long* expires_us) except -1:
    """The twin's ``offer_schema_instants``: True and the two instants when proven."""
    cdef PyObject* slots[12]  # ajp_offer_names[AJP_OFFER:]
    cdef PyObject* recipient[1]
    cdef object v
    if not PyDict_CheckExact(value) or not _members(value, AJP_OFFER, 12, slots):
        return False
    v = _value(slots[0])  # ajp
    if not _ascii_str(v) or not ajp_ajp_version(<const unsigned char*>PyUnicode_DATA(v), PyUnicode_GET_LENGTH(v)):
        return False
    v = _value(slots[1])  # job_id
    if not PyUnicode_CheckExact(v) or not 8 <= PyUnicode_GET_LENGTH(v) <= 256:
        return False
    if not _string_or_null(_value(slots[2]), 256):  # parent_job_id: absent or null alike
        return False
    if not _offer_sender(_value(slots[3])):
        return False
    v = _value(slots[4])  # to
    if not PyDict_CheckExact(v) or not _members(v, AJP_RECIPIENT, 1, recipient) or not _nonempty_str(_value(recipient[0])):
        return False
    if not _offer_task(_value(slots[5])):
        return False
    if slots[6] is not NULL and not _offer_context(<object>slots[6]):
        return False
    if not _offer_budget(_value(slots[7])):
        return False
    if not _offer_callback(_value(slots[8])):  # absent or null alike
        return False
    if not _offer_instant(_value(slots[9]), issued_us) or not _offer_instant(_value(slots[10]), expires_us):
        return False
    v = _value(slots[11])  # signature
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
