# Included by native/_core_c.pyx (shares its namespace), after decoder.pxi.  Native only: the
# pure twin (ajpcore/_core_py/decoder.py) builds every member name; these caches only save
# building and hashing the same str again, so both give the same names.

# ---------------------------------------------------------------------------
# Member names: the ASCII name cache and the text-name cache of the decoder
# ---------------------------------------------------------------------------

# Member names repeat across the records of a document and across documents:
# a small direct-mapped cache of ASCII names saves building and hashing the same
# str again.  An entry is used only after a full byte comparison, and str is
# immutable, so a hit is exactly the str a miss would build.  Each entry also keeps
# the hash of its bytes the scan computed (most misses stop there) and the str's own
# hash (the duplicate check and the dict need it).
cdef enum:
    _KEY_CACHE_SIZE = 2048
    _KEY_CACHE_MAX_LEN = 64

cdef struct KeyEntry:
    PyObject* name          # strong reference, or NULL
    unsigned long long h    # ajpcore_scan_name's hash of its bytes
    Py_hash_t hash          # hash(name)
    Py_ssize_t size         # len(name), or -1

cdef KeyEntry _key_cache[_KEY_CACHE_SIZE]


cdef void _init_key_cache():
    cdef int k
    for k in range(_KEY_CACHE_SIZE):
        _key_cache[k].name = NULL
        _key_cache[k].h = 0
        _key_cache[k].hash = -1
        _key_cache[k].size = -1


_init_key_cache()

# Names that are not plain ASCII (Latin-1, CJK, emoji: UTF-8 text without escapes, at most
# _KEY_CACHE_MAX_LEN bytes) repeat as ASCII ones do, and building one costs a full check of
# its UTF-8, a str and siphash of it.  A second direct-mapped cache keeps each with a copy
# of its bytes.  An entry is stored only after _parse_text accepted the bytes, and used only
# when the bytes between the quotes are equal to its copy: a hit is exactly the str a miss
# would build, from bytes already checked once.
cdef enum:
    _TEXT_KEY_CACHE_SIZE = 512

cdef struct TextKeyEntry:
    PyObject* name          # strong reference, or NULL
    Py_hash_t hash          # hash(name)
    Py_ssize_t size         # the UTF-8 body's length in bytes, or -1
    unsigned char raw[_KEY_CACHE_MAX_LEN]  # the body's bytes

cdef TextKeyEntry _text_key_cache[_TEXT_KEY_CACHE_SIZE]


cdef void _init_text_key_cache():
    cdef int k
    for k in range(_TEXT_KEY_CACHE_SIZE):
        _text_key_cache[k].name = NULL
        _text_key_cache[k].hash = -1
        _text_key_cache[k].size = -1


_init_text_key_cache()


cdef extern from *:
    """
    /* The characters of a compact ASCII str (one PyUnicode_New(size, 127) made): right
       after its PyASCIIObject header, as PyUnicode_DATA finds them (3.10-3.13). */
    #define ajp_ascii_data(o) ((unsigned char *)(((PyASCIIObject *)(o)) + 1))
    """
    unsigned char* _ascii_data "ajp_ascii_data" (PyObject* o) nogil


cdef PyObject* _ascii_key(const unsigned char* p, Py_ssize_t size, unsigned long long h, Py_hash_t* hash_out) except NULL:
    """A new reference to the str of the ASCII bytes ``p[:size]`` (a member name), from the
    cache when present; ``h`` is their ajpcore_scan_name hash, ``hash_out`` receives hash(name)."""
    cdef KeyEntry* e = NULL
    cdef PyObject* old
    cdef object s
    cdef Py_hash_t pyhash
    if size <= _KEY_CACHE_MAX_LEN:
        e = &_key_cache[(h ^ (h >> 29)) & (_KEY_CACHE_SIZE - 1)]
        if e.h == h and e.size == size and _same_bytes(_ascii_data(e.name), p, size):
            hash_out[0] = e.hash
            _incref(e.name)
            return e.name
    s = PyUnicode_New(size, 127)
    memcpy(_ascii_data(<PyObject*>s), p, size)
    pyhash = PyObject_Hash(s)  # cached in the str: every later hit skips hashing
    hash_out[0] = pyhash
    if size <= _KEY_CACHE_MAX_LEN:
        old = e.name
        Py_INCREF(s)
        e.name = <PyObject*>s
        e.h = h
        e.hash = pyhash
        e.size = size
        Py_XDECREF(old)
    _incref(<PyObject*>s)
    return <PyObject*>s


cdef PyObject* _text_key(Parser* self, Py_ssize_t start, Py_ssize_t i, Py_hash_t* hash_out) except NULL:
    """A member name with escapes or non-ASCII text (``_parse_text``), as a new reference;
    ``hash_out`` receives its hash when duplicates are checked.  A short name without
    escapes comes from the text-name cache when its bytes are there."""
    cdef unsigned long long h = 0
    cdef Py_ssize_t body = start + 1
    cdef Py_ssize_t q = _text_name(self.p, body, i, self.n, _KEY_CACHE_MAX_LEN, &h)
    cdef TextKeyEntry* e = NULL
    cdef PyObject* old
    cdef Py_hash_t pyhash = -1
    cdef PyObject* made  # a new reference, until text holds it
    if q >= 0:
        e = &_text_key_cache[(h ^ (h >> 29)) & (_TEXT_KEY_CACHE_SIZE - 1)]
        if e.size == q - body and _same_bytes(e.raw, self.p + body, q - body):
            self.i = q + 1
            hash_out[0] = e.hash if not self.allow_duplicate_keys else -1
            _incref(e.name)
            return e.name
    made = _parse_text(self, start, i)  # checks every byte; refuses what the cache never holds
    text = <object>made
    _decref(made)
    if e != NULL or not self.allow_duplicate_keys:
        pyhash = PyObject_Hash(text)
    if e != NULL:
        old = e.name
        Py_INCREF(text)
        e.name = <PyObject*>text
        e.hash = pyhash
        e.size = q - body
        memcpy(e.raw, self.p + body, q - body)
        Py_XDECREF(old)
    hash_out[0] = pyhash if not self.allow_duplicate_keys else -1
    return _own(text)
