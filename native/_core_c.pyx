# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Native twin of ``ajpcore._core_py``: same functions, same order, same bytes, same errors.

The hot paths of ajpcore, one include per concern (the ``include`` lines at the
end): number formatting, canonical strings and member-name order, the
canonical writer (RFC 8785), strict decoding, the streaming HMAC sink,
Ed25519 byte checks, RFC 3339 timestamps, the offer's fixed shape, slotted
objects and the in-memory replay guard's table.  Each ``native/<concern>.pxi`` has a pure twin
``ajpcore/_core_py/<concern>.py`` with the same functions in the same order.
This file keeps what they share: imports, C-API declarations, limits and the
writer's state.  Errors are the classes of ``ajpcore.errors``; their text and
JSON paths are built by the same Python helpers the pure twin uses.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_Contains, PyDict_Copy, PyDict_DelItem, PyDict_Next
from cpython.float cimport PyFloat_FromDouble
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_FromLongLong
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_XDECREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport atoi
from libc.string cimport memcmp, memcpy

import threading as _threading
from hashlib import sha256 as _sha256
from hmac import compare_digest as _compare_digest

from ajpcore.errors import (
    BadSignature,
    EncodeError,
    KeyFormatError,
    KeyUsageError,
    MalformedSignature,
    SignerFinalized,
    WeakKey,
    format_path,
)
from ajpcore._core_rules import _format_int as _rule_format_int  # rare path: ints beyond 2**53

cdef extern from "Python.h":
    ctypedef struct PyBytesObject
    int _PyBytes_Resize(PyObject **bytes, Py_ssize_t newsize) except -1
    PyObject* PyBytes_FromStringAndSize_raw "PyBytes_FromStringAndSize" (const char *v, Py_ssize_t n) except NULL
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags, int *ptype) except NULL
    bint PyUnicode_IS_ASCII(object o)
    bint PyUnicode_IS_COMPACT_ASCII(object o)
    bint PyUnicode_IS_COMPACT(object o)
    void _incref "Py_INCREF" (PyObject* o)  # on a borrowed pointer: no Cython temporary
    void _decref "Py_DECREF" (PyObject* o)
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


# -- the canonical writer's state (canonical_buffer.pxi), shared by the number, string and value writers --

cdef enum:
    _SCRATCH = 4096       # unbounded mode starts in this stack buffer: no allocation for small documents
    _MAX_CHUNK = 1 << 20  # streaming never buffers more than this, whatever chunk_size allows
    _COPY_OUT = 1 << 20   # outputs this large are copied out of the grown buffer (see _w_finish)
    _INLINE_MEMBERS = 48  # members of the open objects, on the stack until they outgrow it
    _STR_BLOCK = 64       # non-ASCII text is encoded in blocks of this many code points
    _SHAPE_MAX = 16       # objects of at most this many members may reuse a recorded member order
    _SHAPES = 8           # recorded orders (slots chosen by the first name's address)


cdef struct Step:
    PyObject* key      # borrowed from the member stack; NULL for an array index
    Py_ssize_t index


cdef struct Member:
    PyObject* key      # strong references while Writer.borrowed is false (see _w_own)
    PyObject* value
    unsigned long long prefix  # ajp_name_prefix of a Latin-1 name, else 0


cdef extern from *:
    """
    /* Py_EnterRecursiveCall returns -1 up to 3.11 and 1 from 3.12 on failure: one answer. */
    static int ajp_enter_recursive_call(const char *where) { return Py_EnterRecursiveCall(where) ? -1 : 0; }
    /* A legacy str built by PyUnicode_FromUnicode(NULL, n) (CPython <= 3.11) reads as
       empty until made ready; from 3.12 every str is ready. */
    #if PY_VERSION_HEX < 0x030C0000 && !defined(PYPY_VERSION)
    #define ajp_unicode_ready(o) PyUnicode_READY(o)
    #else
    #define ajp_unicode_ready(o) 0
    #endif
    """
    int ajp_enter_recursive_call(const char* where) except -1
    void Py_LeaveRecursiveCall()
    int ajp_unicode_ready(object o) except -1


# The member order of an object shape (canonical_writer.pxi, _put_dict): arrays of records
# repeat the same names in the same insertion order, so their sort is done once, and their
# names are written from text rendered once.
cdef struct Shape:
    Py_ssize_t n                         # 0: nothing recorded
    PyObject* seen                       # first name of the last object sorted here; compared, never dereferenced
    PyObject* keys[_SHAPE_MAX]           # the names in insertion order, strong references
    unsigned char order[_SHAPE_MAX]      # sorted position -> insertion index
    unsigned int generation              # counts the recordings: a writer of the shape sees a change
    bint names_ready                     # name_length and names are rendered (on the first record that uses them)
    unsigned char name_length[_SHAPE_MAX]  # by sorted position: bytes of "name": in names, 0 if not short ASCII
    char names[_SHAPE_MAX][24]           # by sorted position: "name": (ajp_put_short_name)


# A Writer is ~17 KB: it lives on the heap, never on the C stack (a thread's stack may
# be 128 KiB, and a ``write`` callback may re-enter the encoder).  See _w_acquire.
cdef struct Writer:
    char* data          # scratch, or the payload of buf
    Py_ssize_t length
    Py_ssize_t cap
    PyObject* buf       # owned bytes object; NULL while data is scratch
    Py_ssize_t chunk    # 0: unbounded (canonicalize); else flush every chunk bytes
    Py_ssize_t total
    PyObject* write     # borrowed
    int depth
    bint borrowed       # the member stack holds borrowed references (until _w_own)
    Member* members     # a stack: each open object owns members[base:base + n]
    Py_ssize_t mtop
    Py_ssize_t mcap
    unsigned int shapes_live  # bit k: shapes[k] holds references (n > 0)
    Shape shapes[_SHAPES]
    PyObject* shape_names[_SHAPE_MAX]  # scratch of _sort_new_shape / _push_members: off the C stack,
    Member shape_tmp[_SHAPE_MAX]       # whose frames recurse with the nesting
    char number_text[64]               # _put_double's text when the chunk has no room for it: off
                                       # the C stack too (inlined in _put_value, 48 bytes a level)
    Step steps[_MAX_DEPTH + 1]
    Member inline_members[_INLINE_MEMBERS]
    char scratch[_SCRATCH]


# -- the SIMD level (native/simd.h): picked once, here, before any path can run --------------

cdef extern from "simd.h":
    int ajp_simd_lowest()
    int ajp_simd_best()
    void ajp_simd_set(int level)

SIMD_LEVELS = ("scalar", "sse2", "avx2")
"""The native core's SIMD levels, slowest first (see native/simd.h)."""
SIMD_AVAILABLE = SIMD_LEVELS[ajp_simd_lowest():ajp_simd_best() + 1]
"""The levels this build can run on this CPU, slowest first: the values ``AJPCORE_SIMD`` takes
(``scalar`` is the level of a build without SSE2 or with ``-DAJPCORE_NO_SIMD``, ``sse2`` and
``avx2`` those of an x86-64 build)."""


cdef int _simd_init() except -1:
    """The level to run at: the best this build and CPU have, or the one AJPCORE_SIMD forces.

    Forcing is for tests and comparisons (every path stays tested on one machine); a level this
    build cannot run here, or a name that is no level, stops the import with an ImportError that
    says why, rather than running another path than the one asked for.
    """
    import os

    asked = os.environ.get("AJPCORE_SIMD", "").strip().lower()
    if asked in ("", "auto"):
        level = SIMD_AVAILABLE[len(SIMD_AVAILABLE) - 1]
    elif asked not in SIMD_LEVELS:
        raise ImportError(f"AJPCORE_SIMD must be one of auto, {', '.join(SIMD_LEVELS)}; got {asked!r}")
    elif asked not in SIMD_AVAILABLE:
        why = ("a build option (CFLAGS=-DAJPCORE_NO_SIMD)" if asked == "scalar"
               else "a path this build and CPU do not have")
        raise ImportError(f"AJPCORE_SIMD={asked} asks for {why} (available: {', '.join(SIMD_AVAILABLE)})")
    else:
        level = asked
    ajp_simd_set(SIMD_LEVELS.index(level))
    return SIMD_LEVELS.index(level)


SIMD = SIMD_LEVELS[_simd_init()]
"""The SIMD level in use: ``"avx2"``, ``"sse2"`` or ``"scalar"``."""


# One include per concern, in the order of the pure twin's modules (ajpcore/_core_py/):
# read each .pxi beside the .py of the same name.
include "number_format.pxi"
include "canonical_buffer.pxi"  # native only: the Writer the string, number and value writers fill
include "canonical_strings.pxi"
include "canonical_writer.pxi"
include "decoded_tree.pxi"
include "decoder.pxi"
include "decoder_names.pxi"  # native only: member-name caches
include "decoder_numbers.pxi"  # native only: the number reader's general path
include "hmac_sink.pxi"
include "hmac_check.pxi"
include "ed25519_checks.pxi"
include "rfc3339.pxi"
include "offer_shape.pxi"
include "slotted.pxi"
include "replay_table.pxi"
