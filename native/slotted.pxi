# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/slotted.py.

# ---------------------------------------------------------------------------
# A slotted object filled through its member descriptors (the receive pipeline's envelopes)
# ---------------------------------------------------------------------------

cdef extern from "Python.h":
    ctypedef object (*newfunc)(PyTypeObject*, PyObject*, PyObject*)
    ctypedef int (*descrsetfunc)(PyObject*, PyObject*, PyObject*) except -1
    ctypedef struct PyTypeObject:
        newfunc tp_new
        descrsetfunc tp_descr_set
    PyTypeObject PyBaseObject_Type
    PyTypeObject* Py_TYPE(object o)
    bint PyType_Check(object o)

cdef tuple _NO_ARGS = ()


def new_slotted(cls, tuple members, tuple values):
    """``object.__new__(cls)`` with ``members[i].__set__(obj, values[i])`` for each i, in C (see
    ajpcore._core_py.slotted)."""
    cdef Py_ssize_t i, count = PyTuple_GET_SIZE(members)
    cdef PyTypeObject* kind
    cdef descrsetfunc setter
    cdef object obj, member
    if not PyType_Check(cls) or (<PyTypeObject*>cls).tp_new != PyBaseObject_Type.tp_new:
        raise TypeError("new_slotted: `cls` must be a class whose __new__ is object.__new__")
    if PyTuple_GET_SIZE(values) != count:
        raise ValueError("new_slotted: one value per member")
    obj = PyBaseObject_Type.tp_new(<PyTypeObject*>cls, <PyObject*>_NO_ARGS, NULL)
    for i in range(count):
        member = <object>PyTuple_GET_ITEM(members, i)
        setter = Py_TYPE(member).tp_descr_set
        if setter is NULL:
            raise TypeError(f"new_slotted: `{type(member).__name__}` is not a data descriptor")
        setter(<PyObject*>member, <PyObject*>obj, PyTuple_GET_ITEM(values, i))
    return obj
