"""The AJP envelope model: one validated JSON object wrapped by a frozen, slotted class.

``_Envelope`` is the base of every AJP envelope and part; ``_define`` gives a
subclass its typed properties, keyword-only ``__init__`` and schema.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, ClassVar, Dict, Mapping, Optional, Tuple, Union

from .. import _core
from .._jsoncopy import copy_json
from .._schema import CompiledSchema, compile_schema
from ..errors import ValidationError
from ..schemas import load as _load_schema

_MISSING: Any = object()
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _schema(name: str) -> Tuple[Any, CompiledSchema]:
    doc = _load_schema(name)
    return doc, compile_schema(doc)


def _part_schema(doc: Any, *pointer: str) -> CompiledSchema:
    """A subschema of an envelope schema, compiled on its own (a part validated alone)."""
    sub = doc
    for step in pointer:
        sub = sub[step]
    if isinstance(sub, dict):
        sub = dict(sub, **{"$schema": doc["$schema"]})
    return compile_schema(sub)


# -- the frozen, slotted base ----------------------------------------------------------


class _Envelope:
    """Shared machinery of every typed envelope and part.

    An instance wraps one validated JSON object, ``_raw`` (the received one, or
    the one built from keywords); the typed attributes are read from it, and the
    parts (``offer.sender``...) are built on first access and cached in ``_parts``.
    Construction from the wire is therefore one allocation, and what is verified
    and written back is always exactly ``_raw``.

    A subclass declares ``_FIELDS``: ``(attribute, JSON member, part class or
    None, required)``; ``_define`` adds the properties, ``__init__`` and schema.
    """

    __slots__ = ("_raw", "_parts")
    _FIELDS: ClassVar[Tuple[Tuple[str, str, Any, bool], ...]] = ()
    _KNOWN: ClassVar[frozenset] = frozenset()
    _PARTS: ClassVar[Tuple[Tuple[str, Any], ...]] = ()
    _SCHEMA: ClassVar[CompiledSchema]
    _wrap: ClassVar[Callable[[dict], Any]]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"`{type(self).__name__}` is frozen: build a new one with `replace(...)`")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"`{type(self).__name__}` is frozen")

    __hash__ = None  # type: ignore[assignment]  # holds JSON objects, which are mutable

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_json() == other.to_json()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        shown = ", ".join(f"{attr}={getattr(self, attr)!r}" for attr, _, _, _ in self._FIELDS)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> Any:
        return (type(self).from_dict, (self._raw,))

    def _make_parts(self) -> tuple:
        raw = self._raw
        parts = []
        for key, part in self._PARTS:
            v = raw.get(key)
            parts.append(None if v is None else part._wrap(v))
        made = tuple(parts)
        _set_parts(self, made)
        return made

    @property
    def extra(self) -> Mapping[str, Any]:
        """Members this version of ajpcore does not know, as received (read-only view)."""
        raw = self._raw
        known = self._KNOWN
        if known.issuperset(raw):
            return _EMPTY
        return MappingProxyType({k: v for k, v in raw.items() if k not in known})

    @classmethod
    def from_dict(cls, value: Any) -> Any:
        """A typed envelope from a JSON value (copied: later changes to ``value`` do not reach it).

        Raises ``ValidationError`` listing every problem with its JSON path.
        """
        value = copy_json(value)
        if not cls._SCHEMA.is_valid(value):
            raise ValidationError(cls._SCHEMA.errors(value))
        return cls._wrap(value)

    @classmethod
    def from_json(cls, data: Union[bytes, bytearray, memoryview, str]) -> Any:
        """A typed envelope from JSON bytes: strict ``decode``, then ``from_dict``.

        Raises ``DecodeError`` (malformed or not I-JSON, with its byte offset) or
        ``ValidationError`` (every schema problem, with JSON paths).
        """
        value = _core.impl.decode(data)
        if not cls._SCHEMA.is_valid(value):
            raise ValidationError(cls._SCHEMA.errors(value))
        return cls._wrap(value)

    def to_dict(self) -> dict:
        """A fresh JSON object: the received one (same members, same order, unknown
        members kept) or, when built from keywords, the fields that are not None
        followed by ``extra``."""
        return copy_json(self._raw)

    def to_json(self) -> bytes:
        """The RFC 8785 canonical JSON bytes of ``to_dict()``."""
        return _core.impl.canonicalize(self._raw)

    def replace(self, **changes: Any) -> Any:
        """A new envelope with ``changes`` applied (attributes by name; validated again)."""
        kwargs = {attr: getattr(self, attr) for attr, _, _, _ in self._FIELDS}
        unknown = set(changes) - set(kwargs) - {"extra"}
        if unknown:
            raise TypeError(f"`{type(self).__name__}` has no field(s) {', '.join(sorted(unknown))}")
        kwargs["extra"] = dict(self.extra)
        kwargs.update(changes)
        return type(self)(**kwargs)


_set_raw = _Envelope._raw.__set__  # type: ignore[attr-defined]
_set_parts = _Envelope._parts.__set__  # type: ignore[attr-defined]


def _define(cls: Any, schema: CompiledSchema) -> Any:
    """Give ``cls`` its typed properties, keyword-only ``__init__`` and fast ``_wrap``."""
    fields = cls._FIELDS
    cls._SCHEMA = schema
    cls._KNOWN = frozenset(key for _, key, _, _ in fields)
    cls._PARTS = tuple((key, part) for _, key, part, _ in fields if part is not None)
    hints = cls.__annotations__
    index = 0
    for attr, key, part, required in fields:
        if part is None:
            if required:
                getter = _required_getter(key)
            else:
                getter = _optional_getter(key)
        else:
            getter = _part_getter(index)
            index += 1
        getter.__annotations__ = {"return": hints.get(attr, Any)}
        getter.__name__ = attr
        getter.__qualname__ = f"{cls.__qualname__}.{attr}"
        getter.__doc__ = f"The `{key}` member{'' if required else ' (None when absent or null)'}."
        setattr(cls, attr, property(getter))

    new = object.__new__

    def wrap(d: dict) -> Any:
        o = new(cls)
        _set_raw(o, d)
        _set_parts(o, None)
        return o

    cls._wrap = staticmethod(wrap)
    required = [attr for attr, _, _, req in fields if req]
    optional = [attr for attr, _, _, req in fields if not req]
    ns: Dict[str, Any] = {"_init": _init_from_keywords, "_cls": cls}
    params = ", ".join(required + [f"{a}=None" for a in optional] + ["extra=None"])
    given = ", ".join(f"{a}={a}" for a in required + optional)
    exec(f"def __init__(self, *, {params}):\n    _init(self, _cls, dict({given}), extra)", ns)
    init_fn = ns["__init__"]
    init_fn.__qualname__ = f"{cls.__qualname__}.__init__"
    init_fn.__annotations__ = {attr: hints.get(attr, Any) for attr, _, _, _ in fields}
    init_fn.__annotations__["extra"] = Optional[Mapping[str, Any]]
    init_fn.__doc__ = (
        f"A `{cls.__name__}` from keyword arguments; None leaves an optional member out. "
        "Raises ValidationError (every problem, with paths) or TypeError."
    )
    cls.__init__ = init_fn
    return cls


def _required_getter(key: str) -> Callable[[Any], Any]:
    def get(self: Any) -> Any:
        return self._raw[key]

    return get


def _optional_getter(key: str) -> Callable[[Any], Any]:
    def get(self: Any) -> Any:
        return self._raw.get(key)

    return get


def _part_getter(i: int) -> Callable[[Any], Any]:
    def get(self: Any) -> Any:
        parts = self._parts
        if parts is None:
            parts = self._make_parts()
        return parts[i]

    return get


def _init_from_keywords(obj: _Envelope, cls: Any, values: Dict[str, Any], extra: Optional[Mapping[str, Any]]) -> None:
    raw: Dict[str, Any] = {}
    for attr, key, part, _ in cls._FIELDS:
        v = values[attr]
        if v is None:
            continue
        if part is not None:
            if isinstance(v, part):
                v = v.to_dict()
            elif isinstance(v, Mapping):
                v = copy_json(dict(v))
            else:
                raise ValidationError([(f"$.{key}", f"Expected `{part.__name__}` or an object, got `{type(v).__name__}`")])
        else:
            v = copy_json(list(v) if type(v) is tuple else v)
        raw[key] = v
    if extra:
        clash = cls._KNOWN.intersection(extra)
        if clash:
            raise TypeError(f"`extra` repeats known member(s) {', '.join(sorted(clash))}: pass them as keywords")
        for k, v in extra.items():
            raw[k] = copy_json(v)
    checked = raw
    if "signature" in cls._KNOWN and "signature" not in raw:
        # Built unsigned, to be signed with `.signed(...)`: check everything else.
        checked = dict(raw, signature="unsigned:")
    if not cls._SCHEMA.is_valid(checked):
        raise ValidationError(cls._SCHEMA.errors(checked))
    _set_raw(obj, raw)
    _set_parts(obj, None)
