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
# the str's own hash (the duplicate check and the dict need it).  The usual name, at
# most AJPCORE_SHORT_NAME bytes, is found by its bytes read as two words
# (ajpcore_short_name): comparing them is the full comparison.  A longer one is found
# by the hash of its bytes ajpcore_scan_name computed (most misses stop there), then
# compared byte by byte.
cdef enum:
    _KEY_CACHE_BITS = 11
    _KEY_CACHE_SIZE = 1 << _KEY_CACHE_BITS
    _KEY_CACHE_MAX_LEN = 64

cdef struct KeyEntry:
    PyObject* name          # strong reference, or NULL
    unsigned long long w0   # a short name: its bytes as ajpcore_short_name reads them
    unsigned long long w1
    unsigned long long h    # a longer name: ajpcore_scan_name's hash of its bytes
    Py_hash_t hash          # hash(name)
    Py_ssize_t size         # len(name), or -1

cdef KeyEntry _key_cache[_KEY_CACHE_SIZE]


cdef void _init_key_cache():
    cdef int k
    for k in range(_KEY_CACHE_SIZE):
        _key_cache[k].name = NULL
        _key_cache[k].w0 = 0
        _key_cache[k].w1 = 0
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
    /* The characters of a compact ASCII str (one ajpcore_ascii_new made): right after its
       PyASCIIObject header, as PyUnicode_DATA finds them (3.10-3.14). */
    #define ajp_ascii_data(o) ((unsigned char *)(((PyASCIIObject *)(o)) + 1))
    """
    unsigned char* _ascii_data "ajp_ascii_data" (PyObject* o) nogil


cdef inline KeyEntry* _short_entry(const unsigned long long* w) noexcept:
    """The cache slot of the short name whose words ajpcore_short_name read."""
    # Fibonacci hashing of the two words (Knuth, TAOCP vol. 3, §6.4): the top bits pick the slot.
    return &_key_cache[(w[0] * 0x9E3779B97F4A7C15ULL + w[1] * 0xC2B2AE3D27D4EB4FULL) >> (64 - _KEY_CACHE_BITS)]


cdef inline PyObject* _short_key(const unsigned long long* w, Py_ssize_t size, const unsigned char* p, Py_hash_t* hash_out) except NULL:
    """A new reference to the str of the short ASCII name ``p[:size]`` whose words ``w``
    ajpcore_short_name read, from the cache when present; ``hash_out`` receives hash(name)."""
    cdef KeyEntry* e = _short_entry(w)
    if e.w0 == w[0] and e.w1 == w[1] and e.size == size:
        hash_out[0] = e.hash
        _incref(e.name)
        return e.name
    return _new_key(e, p, size, w, 0, hash_out)


cdef PyObject* _new_key(KeyEntry* e, const unsigned char* p, Py_ssize_t size, const unsigned long long* w, unsigned long long h, Py_hash_t* hash_out) except NULL:
    """A cache miss: the str of the ASCII bytes ``p[:size]`` (a new reference), kept in ``e``
    (when not NULL) with what finds it again: its words ``w`` for a short name, else the
    hash ``h`` of its bytes; ``hash_out`` receives hash(name)."""
    cdef PyObject* old
    cdef PyObject* made = _ascii_new(size)
    cdef object s = <object>made
    cdef Py_hash_t pyhash
    _decref(made)  # s holds it
    memcpy(_ascii_data(made), p, size)
    pyhash = PyObject_Hash(s)  # cached in the str: every later hit skips hashing
    hash_out[0] = pyhash
    if e != NULL:
        old = e.name
        Py_INCREF(s)
        e.name = <PyObject*>s
        e.w0 = w[0]
        e.w1 = w[1]
        e.h = h
        e.hash = pyhash
        e.size = size
        Py_XDECREF(old)
    _incref(<PyObject*>s)
    return <PyObject*>s


cdef PyObject* _ascii_key(const unsigned char* p, Py_ssize_t size, unsigned long long h, Py_hash_t* hash_out) except NULL:
    """A new reference to the str of the ASCII bytes ``p[:size]`` (a member name longer than a
    short one), from the cache when present; ``h`` is their ajpcore_scan_name hash,
    ``hash_out`` receives hash(name)."""
    cdef KeyEntry* e = NULL
    cdef unsigned long long none[2]
    none[0] = 0
    none[1] = 0
    if size <= _KEY_CACHE_MAX_LEN:
        e = &_key_cache[(h ^ (h >> 29)) & (_KEY_CACHE_SIZE - 1)]
        if e.h == h and e.size == size and _same_bytes(_ascii_data(e.name), p, size):
            hash_out[0] = e.hash
            _incref(e.name)
            return e.name
    return _new_key(e, p, size, none, h, hash_out)


cdef PyObject* _other_key(Parser* self, Py_ssize_t start, Py_hash_t* hash_out) except NULL:
    """The member name whose opening quote is at ``start`` when it is not a short ASCII one
    (a new reference); leave ``self.i`` after its closing quote."""
    cdef const unsigned char* p = self.p
    cdef unsigned long long name_hash
    cdef Py_ssize_t i = _scan_name(p, start + 1, self.n, &name_hash)
    cdef PyObject* key
    if i < self.n and p[i] == 0x22:
        # Plain ASCII: from the name cache, with its hash.
        key = _ascii_key(p + start + 1, i - start - 1, name_hash, hash_out)
        self.i = i + 1
        return key
    return _text_key(self, start, i, hash_out)


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
