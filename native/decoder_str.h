/* The decoder's str constructor: every string and member name decode makes is created here
   (decoder.pxi _parse_string, decoder_names.pxi _new_key, decoder_utf8_write.h
   ajpcore_text_str).  Included once, by the generated _core_c.c; everything is static.

   A decoded str is always a compact one (PEP 393) of its final kind, written once right after
   it is made, hashed later or never.  PyUnicode_New makes such a str too, but through a
   general path (the kind chosen by four comparisons, the size checked against overflow at each
   kind, the empty-string singleton, a call per field group), ~45 instructions a string on
   3.11 before the characters: on a document of short strings that is more than the scan of
   their bytes.  ajpcore_str_new takes the same steps in a straight line, as PyUnicode_New
   documents them and as Include/cpython/unicodeobject.h lays the header out on each of
   3.10-3.14 (3.14's header is 3.13's, its state now a named struct):

   - memory from PyObject_Malloc, the allocator unicode_dealloc frees it with (PyObject_Free);
     the size is sizeof(PyASCIIObject) (ASCII) or sizeof(PyCompactUnicodeObject), then
     (size + 1) characters of the kind;
   - PyObject_Init sets the type and the reference count and tells tracemalloc (3.10-3.12) and
     the reference tracer (3.13-3.14) about the new object, as _PyObject_Init does for PyUnicode_New;
   - length; hash -1 (not computed); state: interned 0 (not interned), kind, compact 1, ascii,
     and ready 1 (3.10-3.11) / statically_allocated 0 (3.12-3.14), the unnamed bits 0;
   - a non-ASCII str: utf8 NULL, utf8_length 0 (no UTF-8 copy yet);
   - 3.10-3.11 only: wstr, and wstr_length of a non-ASCII str.  Where wchar_t has the width of
     the kind (4-byte kind on Linux and macOS, 2-byte on Windows) the characters are already
     the wchar_t form, so wstr points at them and wstr_length is the length (PyUnicode_New's
     "sharing"); else both are NULL and 0;
   - the character after the last one is 0.

   Anywhere else, a debug build (Py_DEBUG fills new strings with a pattern and checks them;
   Py_TRACE_REFS links every object into a list), the free-threaded build (another object
   header), PyPy, or a version after 3.14 whose layout is not known here, it is PyUnicode_New
   itself.  tests/decode/test_string_header.py checks each header against _PyUnicode_CheckConsistency
   and against the header CPython gives the same text. */
#ifndef AJPCORE_DECODER_STR_H
#define AJPCORE_DECODER_STR_H

#include <Python.h>
#include <string.h>

#if !defined(PYPY_VERSION) && !defined(Py_DEBUG) && !defined(Py_TRACE_REFS) && !defined(Py_GIL_DISABLED) \
    && PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030F0000
#define AJPCORE_OWN_STR 1
#else
#define AJPCORE_OWN_STR 0
#endif

#if AJPCORE_OWN_STR

#if PY_VERSION_HEX < 0x030C0000
#define AJPCORE_STR_STATE(KIND, ASCII) {.interned = 0, .kind = (KIND), .compact = 1, .ascii = (ASCII), .ready = 1}
#else
#define AJPCORE_STR_STATE(KIND, ASCII) \
    {.interned = 0, .kind = (KIND), .compact = 1, .ascii = (ASCII), .statically_allocated = 0}
#endif

/* The state field of each kind of new compact str (ASCII, Latin-1, UCS-2, UCS-4), written by
   the header's own bitfield names; copied whole into each new str (one store, every bit set). */
static const PyASCIIObject ajpcore_str_state_ascii = {.state = AJPCORE_STR_STATE(PyUnicode_1BYTE_KIND, 1)};
static const PyASCIIObject ajpcore_str_state_kind[3] = {
    {.state = AJPCORE_STR_STATE(PyUnicode_1BYTE_KIND, 0)},
    {.state = AJPCORE_STR_STATE(PyUnicode_2BYTE_KIND, 0)},
    {.state = AJPCORE_STR_STATE(PyUnicode_4BYTE_KIND, 0)},
};

/* sizeof(PyCompactUnicodeObject) + (size + 1) * 4 must fit a Py_ssize_t. */
#define AJPCORE_STR_MAX ((PY_SSIZE_T_MAX - (Py_ssize_t)sizeof(PyCompactUnicodeObject)) / 4 - 1)

/* A new compact ASCII str of `size` characters, to be written at ajp_ascii_data (the empty
   one is CPython's singleton, as PyUnicode_New gives); NULL with MemoryError set when memory
   is short. */
static inline PyObject *ajpcore_ascii_new(Py_ssize_t size) {
    PyASCIIObject *s;
    if (size == 0)
        return PyUnicode_New(0, 0);
    if (size > AJPCORE_STR_MAX)
        return PyErr_NoMemory();
    s = (PyASCIIObject *)PyObject_Malloc(sizeof(PyASCIIObject) + (size_t)size + 1);
    if (s == NULL)
        return PyErr_NoMemory();
    (void)PyObject_Init((PyObject *)s, &PyUnicode_Type);
    s->length = size;
    s->hash = -1;
    memcpy(&s->state, &ajpcore_str_state_ascii.state, sizeof(s->state));
#if PY_VERSION_HEX < 0x030C0000
    s->wstr = NULL;
#endif
    ((unsigned char *)(s + 1))[size] = 0;
    return (PyObject *)s;
}

/* A new compact str of `size` characters whose widest is `maxchar` (<= 0x10FFFF): ASCII,
   Latin-1, UCS-2 or UCS-4 as PyUnicode_New picks.  NULL with MemoryError set when memory is short. */
static inline PyObject *ajpcore_str_new(Py_ssize_t size, Py_UCS4 maxchar) {
    PyCompactUnicodeObject *s;
    int kind, slot;
    void *data;
    if (maxchar < 0x80)
        return ajpcore_ascii_new(size);
    if (maxchar < 0x100) {
        kind = PyUnicode_1BYTE_KIND;
        slot = 0;
    } else if (maxchar < 0x10000) {
        kind = PyUnicode_2BYTE_KIND;
        slot = 1;
    } else {
        kind = PyUnicode_4BYTE_KIND;
        slot = 2;
    }
    if (size > AJPCORE_STR_MAX)
        return PyErr_NoMemory();
    s = (PyCompactUnicodeObject *)PyObject_Malloc(sizeof(PyCompactUnicodeObject) + (size_t)(size + 1) * kind);
    if (s == NULL)
        return PyErr_NoMemory();
    (void)PyObject_Init((PyObject *)s, &PyUnicode_Type);
    data = s + 1;
    s->_base.length = size;
    s->_base.hash = -1;
    memcpy(&s->_base.state, &ajpcore_str_state_kind[slot].state, sizeof(s->_base.state));
    s->utf8_length = 0;
    s->utf8 = NULL;
#if PY_VERSION_HEX < 0x030C0000
    if ((kind == PyUnicode_4BYTE_KIND && sizeof(wchar_t) == 4) || (kind == PyUnicode_2BYTE_KIND && sizeof(wchar_t) == 2)) {
        s->_base.wstr = (wchar_t *)data;
        s->wstr_length = size;
    } else {
        s->_base.wstr = NULL;
        s->wstr_length = 0;
    }
#endif
    if (kind == PyUnicode_1BYTE_KIND)
        ((Py_UCS1 *)data)[size] = 0;
    else if (kind == PyUnicode_2BYTE_KIND)
        ((Py_UCS2 *)data)[size] = 0;
    else
        ((Py_UCS4 *)data)[size] = 0;
    return (PyObject *)s;
}

#else /* not AJPCORE_OWN_STR */

static inline PyObject *ajpcore_ascii_new(Py_ssize_t size) { return PyUnicode_New(size, 127); }
static inline PyObject *ajpcore_str_new(Py_ssize_t size, Py_UCS4 maxchar) { return PyUnicode_New(size, maxchar); }

#endif /* AJPCORE_OWN_STR */

#endif /* AJPCORE_DECODER_STR_H */
