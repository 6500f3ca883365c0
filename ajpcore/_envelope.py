"""The one envelope model of ajpcore: AJP and IATP messages and their parts.

An envelope wraps one schema-valid JSON object, ``_raw``: the one decoded from
the wire, or the one built from keywords.  Reading from the wire is therefore one
decode, one schema check and one small allocation; every typed attribute is read
from ``_raw`` when asked for (parts are built on first access and cached), and
what ``to_dict``/``to_json`` write back and what a signature covers is always
exactly ``_raw``: unknown members at every level included, byte for byte.

A subclass declares its members as annotated class attributes, the way a
dataclass does, and type checkers see it as one (``typing.dataclass_transform``):
keyword-only construction with the declared types, frozen attributes.  The
annotation decides how a member is read:

- a subclass of ``Envelope``: a part, built from the nested object;
- an ``enum.Enum`` subclass: the member of that enum named by the JSON value;
- ``int``: a JSON Schema integer (an integral ``10.0`` reads as ``10``);
- ``Tuple[X, ...]`` of parts or enums: a tuple of them;
- anything else: the JSON value as received (treat nested containers as read-only).

A member without a default is required.  ``= None`` makes it optional (absent and
JSON ``null`` both read as ``None``); ``= member(default=ABSENT)`` keeps the two
apart (``ABSENT`` when absent, ``None`` for ``null``, ``None`` given to the
constructor writes ``null``); ``member(json="from")`` reads a JSON name that is
not a Python identifier or is a keyword.  Each concrete class names its schema with
``_SCHEMA``: a schema shipped in ``ajpcore/schemas/``, then the member path to the
part (``ajpcore._envelope_schemas`` compiles it on first use).
"""

from __future__ import annotations

import enum
import functools
import sys
import typing
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Dict, FrozenSet, List, Mapping, Optional, Tuple, Type, TypeVar, Union

from . import _core
from ._envelope_schemas import compiled as _compiled_schema
from ._jsoncopy import copy_json, copy_json_collecting
from .errors import ValidationError, format_path

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
elif TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda cls: cls


__all__ = ["ABSENT", "Envelope", "member"]

_E = TypeVar("_E", bound="Envelope")


class _Absent(enum.Enum):
    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT = _Absent.ABSENT
"""Marks a member that is absent where ``None`` means JSON ``null``."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class _Spec:
    """What ``member(...)`` returns: read by ``Envelope.__init_subclass__``, then removed."""

    __slots__ = ("json", "default")

    def __init__(self, json: Optional[str], default: Any) -> None:
        self.json = json
        self.default = default


_REQUIRED: Any = object()


def member(*, json: Optional[str] = None, default: Any = _REQUIRED) -> Any:
    """Declare a member whose JSON name is ``json`` (default: the attribute name)
    and whose value when absent is ``default`` (no default: the member is required)."""
    return _Spec(json, default)


# -- schemas ------------------------------------------------------------------------------


class _Validator(typing.Protocol):
    def is_valid(self, value: Any) -> bool: ...

    def errors(self, value: Any) -> List[Tuple[str, str]]: ...


class _LazySchema:
    """Stands in for a class's schema until first use, then compiles it and takes its place."""

    __slots__ = ("cls", "load", "compiled")

    def __init__(self, cls: Type["_Model"], load: Callable[[], _Validator]) -> None:
        self.cls = cls
        self.load = load
        self.compiled: Optional[_Validator] = None

    def _real(self) -> _Validator:
        if self.compiled is None:
            self.compiled = self.load()
            type.__setattr__(self.cls, "_VALIDATOR", self.compiled)
        return self.compiled

    def is_valid(self, value: Any) -> bool:
        return self._real().is_valid(value)

    def errors(self, value: Any) -> List[Tuple[str, str]]:
        return list(self._real().errors(value))


# -- fields: how each member is read --------------------------------------------------------

_KIND_PLAIN, _KIND_INT, _KIND_ENUM, _KIND_PART, _KIND_TUPLE = range(5)


class _Field:
    """A data descriptor reading one member of ``_raw``; frozen (setting raises)."""

    __slots__ = ("attr", "key", "default", "required", "kind", "item", "index")

    def __init__(self, attr: str, key: str, default: Any, kind: int, item: Any) -> None:
        self.attr = attr
        self.key = key
        self.required = default is _REQUIRED
        self.default = None if self.required else default
        self.kind = kind
        self.item = item  # the part or enum class (of the items, for a tuple)
        self.index = -1  # slot in the instance's cache (parts and tuples)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"`{type(obj).__name__}` is frozen: build a new one with `replace(...)`")

    def __delete__(self, obj: Any) -> None:
        raise AttributeError(f"`{type(obj).__name__}` is frozen")


class _PlainField(_Field):
    __slots__ = ()

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        return obj._raw.get(self.key, self.default)


class _IntField(_Field):
    __slots__ = ()

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        v = obj._raw.get(self.key, self.default)
        return int(v) if type(v) is float else v


class _EnumField(_Field):
    __slots__ = ("members",)

    def __init__(self, attr: str, key: str, default: Any, kind: int, item: Any) -> None:
        super().__init__(attr, key, default, kind, item)
        self.members = {m.value: m for m in item}

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        v = obj._raw.get(self.key)
        return self.default if v is None else self.members[v]


class _CachedField(_Field):
    """A part, or a tuple of parts or enum members: built on first access, then cached."""

    __slots__ = ()

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        cache = obj._cache
        if cache is None:
            cache = [_UNSET] * type(obj)._NCACHED
            _set_cache(obj, cache)
        v = cache[self.index]
        if v is _UNSET:
            v = cache[self.index] = self.build(obj._raw.get(self.key))
        return v

    def build(self, value: Any) -> Any:
        if value is None:
            return self.default
        item = self.item
        if self.kind == _KIND_PART:
            return item._wrap(value)
        if isinstance(item, type) and issubclass(item, Envelope):
            return tuple(map(item._wrap, value))
        members = {m.value: m for m in item}
        return tuple(members[v] for v in value)


_UNSET: Any = object()


def _kind_of(hint: Any) -> Tuple[int, Any]:
    """How a member annotated ``hint`` is read: (kind, part or enum class)."""
    args = [a for a in typing.get_args(hint) if a is not type(None) and a is not _Absent]
    if typing.get_origin(hint) is Union:
        if len(args) != 1:
            return _KIND_PLAIN, None
        hint = args[0]
    if isinstance(hint, type):
        if issubclass(hint, Envelope):
            return _KIND_PART, hint
        if issubclass(hint, enum.Enum):
            return _KIND_ENUM, hint
        if hint is int:
            return _KIND_INT, None
    if typing.get_origin(hint) is tuple:
        items = typing.get_args(hint)
        if len(items) == 2 and items[1] is Ellipsis and isinstance(items[0], type):
            if issubclass(items[0], (Envelope, enum.Enum)):
                return _KIND_TUPLE, items[0]
    return _KIND_PLAIN, None


_FIELD_CLASS = {_KIND_PLAIN: _PlainField, _KIND_INT: _IntField, _KIND_ENUM: _EnumField,
                _KIND_PART: _CachedField, _KIND_TUPLE: _CachedField}


# -- the base -----------------------------------------------------------------------------------


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(member,))
class _Model:
    """Runtime machinery of ``Envelope`` (type checkers see its subclasses as frozen,
    keyword-only dataclasses)."""

    __slots__ = ("_raw", "_cache")
    _raw: Dict[str, Any]
    _cache: Optional[List[Any]]

    _FIELDS: ClassVar[Tuple[_Field, ...]] = ()
    _KNOWN: ClassVar[FrozenSet[str]] = frozenset()  # JSON names of the declared members
    _NCACHED: ClassVar[int] = 0
    _VALIDATOR: ClassVar[_Validator]
    _SCHEMA: ClassVar[Tuple[str, ...]] = ()
    """The class's schema: a shipped schema's name, then the member path to the part; compiled on first use."""
    _PARTS_FROM_MAPPINGS: ClassVar[bool] = True
    """Whether the constructor takes a plain JSON object for a part (AJP) or only the part's class (IATP)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__slots__" not in cls.__dict__:
            raise TypeError(f"envelope class `{cls.__name__}` must declare `__slots__ = ()`")
        schema = cls.__dict__.get("_SCHEMA")
        if schema:
            type.__setattr__(cls, "_VALIDATOR", _LazySchema(cls, functools.partial(_compiled_schema, *schema)))
        own = cls.__dict__.get("__annotations__", {})
        if not own:
            return
        hints = typing.get_type_hints(cls)
        fields = {f.attr: f for f in cls._FIELDS}
        for attr in own:
            hint = hints[attr]
            if typing.get_origin(hint) is ClassVar or attr.startswith("_") or attr == "extra":
                continue
            spec = cls.__dict__.get(attr, _REQUIRED)
            key, default = attr, spec
            if isinstance(spec, _Spec):
                key, default = spec.json or attr, spec.default
            kind, item = _kind_of(hint)
            fields[attr] = _FIELD_CLASS[kind](attr, key, default, kind, item)
        ncached = 0
        for f in fields.values():
            if isinstance(f, _CachedField):
                f.index = ncached
                ncached += 1
            type.__setattr__(cls, f.attr, f)
        cls._FIELDS = tuple(fields.values())
        cls._KNOWN = frozenset(f.key for f in cls._FIELDS)
        cls._NCACHED = ncached

    # -- frozen ---------------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"`{type(self).__name__}` is frozen: build a new one with `replace(...)`")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"`{type(self).__name__}` is frozen")


# The slots' own setters: the one way to fill a frozen instance.
_set_raw: Callable[[Any, Any], None] = _Model.__dict__["_raw"].__set__
_set_cache: Callable[[Any, Any], None] = _Model.__dict__["_cache"].__set__
_new = object.__new__


class Envelope(_Model):
    """Base of every typed AJP and IATP message and part (see the module docstring).

    ``extra`` holds the members this version of ajpcore does not name, as
    received (a read-only view); given to the constructor, they are written after
    the declared members.
    """

    __slots__ = ()
    extra: Mapping[str, Any] = member(default=_EMPTY)

    __hash__ = None  # type: ignore[assignment]  # holds JSON containers, which are mutable

    if not TYPE_CHECKING:  # type checkers synthesize the keyword-only __init__ from the fields

        def __init__(self, **values: Any) -> None:
            _init_from_keywords(self, values)

    @classmethod
    def _wrap(cls: Type[_E], value: Dict[str, Any]) -> _E:
        """The envelope of a value its schema accepted (no check, no copy)."""
        obj = _new(cls)
        _set_raw(obj, value)
        _set_cache(obj, None)
        return obj

    @classmethod
    def _from_checked(cls: Type[_E], value: Any) -> _E:
        """The envelope of a JSON value this call may keep (validated, not copied)."""
        schema = cls._VALIDATOR
        if not schema.is_valid(value):
            raise ValidationError(cls._VALIDATOR.errors(value))
        obj = _new(cls)
        _set_raw(obj, value)
        _set_cache(obj, None)
        return obj

    @classmethod
    def from_dict(cls: Type[_E], value: Any) -> _E:
        """The envelope of a decoded JSON value, copied (later changes to ``value`` do not reach it).

        Accepts exactly what the class's shipped schema accepts.  Raises
        ``ValidationError`` listing every problem with its JSON path (values
        without a JSON form included: NaN, lone surrogates, non-str names...).
        """
        return cls._from_checked(copy_json(value))

    @classmethod
    def from_json(cls: Type[_E], data: Union[bytes, bytearray, memoryview, str]) -> _E:
        """The envelope of JSON bytes: strict ``ajpcore.decode``, then the schema.

        Raises ``DecodeError`` (malformed or not I-JSON, with its byte offset) or
        ``ValidationError`` (a ``DecodeError``: every schema problem, with JSON paths).
        """
        value = _core.impl.decode(data)
        schema = cls._VALIDATOR
        if not schema.is_valid(value):
            raise ValidationError(cls._VALIDATOR.errors(value))
        obj = _new(cls)
        _set_raw(obj, value)
        _set_cache(obj, None)
        return obj

    def to_dict(self) -> Dict[str, Any]:
        """A fresh JSON object: the received one (same members, same order, unknown
        members kept) or, when built from keywords, the declared members given
        followed by ``extra``."""
        return _copy_valid(self._raw)

    def to_json(self) -> bytes:
        """The RFC 8785 canonical JSON bytes of ``to_dict()``."""
        out: bytes = _core.impl.canonicalize(self._raw)
        return out

    def replace(self: _E, **changes: Any) -> _E:
        """A new envelope with ``changes`` applied (attributes by name, ``extra`` too; validated again)."""
        values: Dict[str, Any] = {f.attr: getattr(self, f.attr) for f in self._FIELDS}
        values["extra"] = dict(self.extra)
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"`{type(self).__name__}` has no field(s) {', '.join(sorted(unknown))}")
        values.update(changes)
        return type(self)(**values)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Envelope)
        return self.to_json() == other.to_json()

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.attr}={getattr(self, f.attr)!r}" for f in self._FIELDS)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> Any:
        # Pickle and copy through the JSON form; unpickling validates again.
        return (type(self).from_dict, (self._raw,))


def _copy_valid(value: Dict[str, Any]) -> Dict[str, Any]:
    """A deep copy of a JSON object already known to be valid JSON (no checks), members in
    the same order.  Iterative: any depth is safe."""
    root: Dict[str, Any] = {}
    stack: List[Tuple[Any, Any]] = [(value, root)]
    pop, push = stack.pop, stack.append
    while stack:
        src, dst = pop()
        if type(dst) is dict:
            for k, v in src.items():
                t = type(v)
                if t is dict:
                    c: Any = {}
                    push((v, c))
                    v = c
                elif t is list:
                    c = []
                    push((v, c))
                    v = c
                dst[k] = v
        else:
            append = dst.append
            for v in src:
                t = type(v)
                if t is dict:
                    c = {}
                    push((v, c))
                    v = c
                elif t is list:
                    c = []
                    push((v, c))
                    v = c
                append(v)
    return root


def _extra_of(self: Envelope) -> Mapping[str, Any]:
    raw = self._raw
    known = self._KNOWN
    if known.issuperset(raw):
        return _EMPTY
    return MappingProxyType({k: v for k, v in raw.items() if k not in known})


type.__setattr__(Envelope, "extra", property(_extra_of, doc=Envelope.__doc__))


class _DeclaredInExtra(ValidationError, TypeError):
    """``extra`` names a declared member: a wrong call (TypeError) and a shape problem."""


def _choices(kind: Type[enum.Enum]) -> str:
    return ", ".join(f"`{m.value}`" for m in kind)


def _part_json(f: _Field, item: Any, value: Any, steps: List[Any], errors: List[Tuple[str, str]], mappings: bool) -> Any:
    if isinstance(value, item):
        return value._raw
    if mappings and isinstance(value, Mapping):
        return dict(value)
    expected = f"`{item.__name__}` or an object" if mappings else f"`{item.__name__}`"
    errors.append((format_path(steps), f"Expected {expected}, got `{type(value).__name__}`"))
    return None


def _enum_json(item: Any, value: Any, steps: List[Any], errors: List[Tuple[str, str]]) -> Any:
    if isinstance(value, item):
        return value.value
    try:
        return item(value).value
    except (ValueError, TypeError):
        errors.append((format_path(steps), f"Expected one of {_choices(item)}, got `{value!r}`"))
        return None


def _init_from_keywords(obj: Envelope, values: Dict[str, Any]) -> None:
    cls = type(obj)
    name = cls.__name__
    fields = cls._FIELDS
    unknown = set(values) - {f.attr for f in fields} - {"extra"}
    if unknown:
        raise TypeError(f"{name}() got unexpected keyword argument(s) {', '.join(sorted(unknown))}")
    missing = [f.attr for f in fields if f.required and f.attr not in values]
    if missing:
        raise TypeError(f"{name}() is missing required keyword argument(s) {', '.join(missing)}")
    mappings = cls._PARTS_FROM_MAPPINGS
    errors: List[Tuple[str, str]] = []
    raw: Dict[str, Any] = {}
    for f in fields:
        value = values.get(f.attr, f.default)
        if value is ABSENT or (value is None and f.default is not ABSENT):
            continue  # None leaves an optional member out, unless null is a value of its own
        key = f.key
        if value is not None:
            if f.kind == _KIND_PART:
                value = _part_json(f, f.item, value, [key], errors, mappings)
            elif f.kind == _KIND_ENUM:
                value = _enum_json(f.item, value, [key], errors)
            elif f.kind == _KIND_INT:
                if type(value) is float and value.is_integer():
                    value = int(value)
            elif f.kind == _KIND_TUPLE:
                if not isinstance(value, (list, tuple)):
                    errors.append((format_path([key]), f"Expected `array`, got `{type(value).__name__}`"))
                    continue
                if issubclass(f.item, Envelope):
                    value = [_part_json(f, f.item, v, [key, i], errors, False) for i, v in enumerate(value)]
                else:
                    value = [_enum_json(f.item, v, [key, i], errors) for i, v in enumerate(value)]
        raw[key] = value
    extra = values.get("extra")
    if extra:
        if not isinstance(extra, Mapping):
            errors.append(("$", f"Expected a mapping of extra members, got `{type(extra).__name__}`"))
        else:
            clashes = sorted(cls._KNOWN.intersection(extra))
            if clashes:
                raise _DeclaredInExtra([(format_path([k]), "Declared member given in `extra`") for k in clashes])
            raw.update(extra)
    if errors:
        raise ValidationError(errors)
    document = copy_json_collecting(raw, errors)  # NaN, huge ints, lone surrogates, depth; and no aliasing
    if errors:
        raise ValidationError(errors)
    checked = document
    if "signature" in cls._KNOWN and "signature" not in document:
        # Built unsigned, to be signed with `.signed(...)`: check everything else.
        checked = dict(document, signature="unsigned:")
    schema = cls._VALIDATOR
    if not schema.is_valid(checked):
        raise ValidationError(schema.errors(checked))
    _set_raw(obj, document)
    _set_cache(obj, None)
