# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/hmac_check.py.

# ---------------------------------------------------------------------------
# The HMAC check of a received body: its tag when its signature is exactly that tag
# ---------------------------------------------------------------------------


def hmac_sha256_verified_tag(body, secret, chunk_size=65536):
    """The 32-byte HMAC-SHA256 tag of ``body`` when ``body["signature"]`` is exactly its ``sha256:`` text, else None.

    See ajpcore._core_py.hmac_check.  The texts are compared by ``hmac.compare_digest``, as the pure twin does.
    """
    cdef object signature, states, rest
    cdef dict fields
    cdef bytes tag
    cdef const unsigned char* t
    cdef char text[71]
    cdef int i
    if not PyDict_CheckExact(body):
        return None
    if (type(secret) is not str and type(secret) is not bytes) or len(secret) == 0:
        return None
    fields = <dict>body
    signature = fields.get("signature")
    if not PyUnicode_CheckExact(signature):
        return None
    ajp_unicode_ready(signature)
    if PyUnicode_GET_LENGTH(signature) != 71 or not PyUnicode_IS_ASCII(signature):
        return None
    states = _hmac_keyed_states(secret)
    rest = PyDict_Copy(fields)
    PyDict_DelItem(rest, "signature")
    tag = _hmac_tag(<tuple>states, rest, chunk_size)
    t = <const unsigned char*>PyBytes_AS_STRING(tag)
    memcpy(text, b"sha256:", 7)
    for i in range(_HMAC_TAG_SIZE):
        text[7 + 2 * i] = _HEX[t[i] >> 4]
        text[8 + 2 * i] = _HEX[t[i] & 15]
    return tag if _compare_digest(PyUnicode_DecodeUTF8(text, 71, NULL), signature) else None
