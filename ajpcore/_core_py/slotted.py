"""A slotted object filled through its member descriptors: twin of ``native/slotted.pxi``.

The receive pipeline builds two objects per offer (the ``JobOffer`` envelope and the
``ReceivedOffer``), both slotted and frozen: ``object.__new__`` and each slot's own setter
(the member descriptor's ``__set__``), since their ``__setattr__`` refuses.  In Python each
setter is a call through a method wrapper; the native twin calls the descriptors' C slot.
"""

from __future__ import annotations

from typing import Any, Tuple

__all__ = ["new_slotted"]


def new_slotted(cls: Any, members: Tuple[Any, ...], values: Tuple[Any, ...]) -> Any:
    """``object.__new__(cls)``, then ``members[i].__set__(obj, values[i])`` for each ``i``.

    ``cls`` must be a class whose ``__new__`` is ``object.__new__`` (``TypeError``); ``members``
    data descriptors (``TypeError``), ``values`` one a member (``ValueError``).  A setter's
    own error propagates.
    """
    new: Any = getattr(cls, "__new__", None)
    if not isinstance(cls, type) or new is not object.__new__:
        raise TypeError("new_slotted: `cls` must be a class whose __new__ is object.__new__")
    if len(values) != len(members):
        raise ValueError("new_slotted: one value per member")
    obj = object.__new__(cls)
    for member, value in zip(members, values):
        setter = getattr(type(member), "__set__", None)
        if setter is None:
            raise TypeError(f"new_slotted: `{type(member).__name__}` is not a data descriptor")
        setter(member, obj, value)
    return obj
