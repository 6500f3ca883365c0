"""The IATP envelope model: frozen, slotted, keyword-only dataclasses built from
schema-valid JSON, with ``from_json``/``from_dict``/``to_dict``/``to_json``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import sys
from types import MappingProxyType
from typing import Any, ClassVar, Dict, FrozenSet, List, Mapping, Optional, Tuple, Type, TypeVar, Union

from .. import _core
from .._jsoncopy import copy_json, copy_json_collecting
from ..errors import TimestampError, ValidationError, format_path
from ._enums import ABSENT
from ._schemas import _problems


# Frozen, slotted, keyword-only on every Python that has the options (3.10+);
# on 3.9 the classes are frozen and take their required fields first.
_DATACLASS: Dict[str, Any] = {"frozen": True}
if sys.version_info >= (3, 10):
    _DATACLASS.update(slots=True, kw_only=True)


_P = TypeVar("_P", bound="_Part")


def _member(json_name: Optional[str] = None, kind: Any = None, default: Any = None) -> Any:
    return dataclasses.field(default=default, metadata={"json": json_name, "kind": kind})


def _extra() -> Any:
    return dataclasses.field(
        default_factory=lambda: MappingProxyType({}), metadata={"json": None, "kind": "extra"}
    )


class _Int:
    """JSON Schema ``integer``: an integral float such as ``10.0`` is an integer too."""


_NO_EXTRA: Mapping[str, Any] = MappingProxyType({})


def _integer(value: Any) -> Any:
    return int(value) if type(value) is float else value


def _converter(kind: Any) -> Any:
    """How ``_from_valid`` turns a schema-valid JSON value into the member's Python value."""
    if kind is None or kind == _NULLABLE:
        return None
    if kind is _Int:
        return _integer
    if isinstance(kind, type) and issubclass(kind, _Part):
        return kind._from_valid
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return {member.value: member for member in kind}.__getitem__
    item = _converter(kind[1])
    return lambda values: tuple(map(item, values))


class _Part:
    """Shared machinery of the typed IATP objects (construction, JSON form, validation)."""

    __slots__ = ()
    _SCHEMA: ClassVar[Tuple[str, ...]] = ()  # schema name, then the property path to this part
    _MEMBERS: ClassVar[Tuple[Tuple[str, str, Any, Any], ...]] = ()  # (attr, json, kind, default)
    _NAMES: ClassVar[FrozenSet[str]] = frozenset()
    _PLAN: ClassVar[Tuple[Tuple[str, str, Any, Any], ...]] = ()  # (attr, json, converter, default)

    extra: Mapping[str, Any]

    @classmethod
    def _declare(cls) -> None:
        members = []
        plan = []
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            kind = f.metadata.get("kind")
            if kind == "extra":
                continue
            name = f.metadata.get("json") or f.name
            members.append((f.name, name, kind, f.default))
            plan.append((f.name, name, _converter(kind), f.default))
        cls._MEMBERS = tuple(members)
        cls._PLAN = tuple(plan)
        cls._NAMES = frozenset(m[1] for m in members)

    # -- from JSON ------------------------------------------------------------

    @classmethod
    def _from_valid(cls: Type[_P], data: Dict[str, Any]) -> _P:
        """Build from a value the schema accepted (no second validation, no copy)."""
        obj = object.__new__(cls)
        setattr_ = object.__setattr__
        present = 0
        for attr, name, convert, default in cls._PLAN:
            if name in data:
                present += 1
                value = data[name]
                setattr_(obj, attr, value if convert is None else convert(value))
            else:
                setattr_(obj, attr, default)
        if present == len(data):
            setattr_(obj, "extra", _NO_EXTRA)
        else:
            names = cls._NAMES
            setattr_(obj, "extra", MappingProxyType({k: v for k, v in data.items() if k not in names}))
        return obj

    @classmethod
    def from_dict(cls: Type[_P], data: Mapping[str, Any]) -> _P:
        """Validate a decoded JSON object and build the typed value.

        Accepts exactly what the published schema accepts for this object.  The
        input is copied (never aliased).  Raises ``ValidationError`` listing
        every problem, each with its JSON path.
        """
        return cls._from_checked(copy_json(data))

    @classmethod
    def _from_checked(cls: Type[_P], data: Any) -> _P:
        problems = _problems(cls._SCHEMA[0], cls._SCHEMA[1:], data)
        if problems:
            raise ValidationError(problems)
        return cls._from_valid(data)

    @classmethod
    def from_json(cls: Type[_P], data: Union[bytes, bytearray, memoryview, str]) -> _P:
        """Decode ``data`` strictly (``ajpcore.decode``), validate it and build the typed value.

        Raises ``DecodeError`` for bytes that are not strict I-JSON and
        ``ValidationError`` (a ``DecodeError``) listing every schema problem.
        """
        return cls._from_checked(_core.impl.decode(data))

    # -- to JSON --------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object of this value: declared members that are present, then ``extra``.

        A fresh structure on every call; ``from_dict(x.to_dict()) == x``.
        """
        out: Dict[str, Any] = {}
        for attr, name, kind, _default in self._MEMBERS:
            value = getattr(self, attr)
            if value is None and kind is not _NULLABLE or value is ABSENT:
                continue
            if isinstance(value, _Part):
                value = value.to_dict()
            elif isinstance(value, enum.Enum):
                value = value.value
            elif isinstance(value, tuple):
                value = [v.to_dict() if isinstance(v, _Part) else v.value for v in value]
            out[name] = value
        for key, value in self.extra.items():
            out[key] = copy_json(value)
        return out

    def to_json(self) -> bytes:
        """RFC 8785 canonical bytes of ``to_dict()``."""
        return _core.impl.canonicalize(self.to_dict())

    def __reduce__(self) -> Any:
        # Pickle and copy through the JSON form (the read-only mapping of extra
        # members cannot be pickled itself); unpickling validates again.
        return (type(self).from_dict, (self.to_dict(),))

    # -- direct construction --------------------------------------------------

    def __post_init__(self) -> None:
        # Objects built by hand pass the same schema as parsed ones: coerce enum
        # strings and lists, then validate the JSON form this object would write.
        errors: List[Tuple[str, str]] = []
        for attr, name, kind, _default in self._MEMBERS:
            value = getattr(self, attr)
            if value is None or value is ABSENT:
                continue
            steps = [name]
            if isinstance(kind, type) and issubclass(kind, _Part):
                if not isinstance(value, kind):
                    errors.append((format_path(steps), f"Expected `{kind.__name__}`, got `{type(value).__name__}`"))
            elif isinstance(kind, type) and issubclass(kind, enum.Enum):
                if not isinstance(value, kind):
                    try:
                        object.__setattr__(self, attr, kind(value))
                    except ValueError:
                        errors.append((format_path(steps), f"Expected one of {_choices(kind)}, got `{value!r}`"))
            elif kind is _Int:
                if type(value) is float and value.is_integer():
                    object.__setattr__(self, attr, int(value))
            elif isinstance(kind, tuple):
                item_kind = kind[1]
                if not isinstance(value, (list, tuple)):
                    errors.append((format_path(steps), f"Expected `array`, got `{type(value).__name__}`"))
                    continue
                items = []
                for i, item in enumerate(value):
                    if issubclass(item_kind, _Part):
                        if not isinstance(item, item_kind):
                            errors.append((format_path(steps + [i]), f"Expected `{item_kind.__name__}`, got `{type(item).__name__}`"))
                    elif not isinstance(item, item_kind):
                        try:
                            item = item_kind(item)
                        except ValueError:
                            errors.append((format_path(steps + [i]), f"Expected one of {_choices(item_kind)}, got `{item!r}`"))
                    items.append(item)
                object.__setattr__(self, attr, tuple(items))
        if not isinstance(self.extra, Mapping):
            errors.append(("$", f"Expected a mapping of extra members, got `{type(self.extra).__name__}`"))
        else:
            clashes = sorted(set(self.extra) & self._NAMES)
            for key in clashes:
                errors.append((format_path([key]), "Declared member given in `extra`"))
            extra = copy_json_collecting(dict(self.extra), errors)
            object.__setattr__(self, "extra", MappingProxyType(extra if isinstance(extra, dict) else {}))
        if errors:
            raise ValidationError(errors)
        document = self.to_dict()
        copy_json_collecting(document, errors)  # NaN, huge ints, lone surrogates, depth of the whole
        errors.extend(_problems(self._SCHEMA[0], self._SCHEMA[1:], document))
        if errors:
            raise ValidationError(errors)


def _choices(kind: Type[enum.Enum]) -> str:
    return ", ".join(f"`{m.value}`" for m in kind)


_NULLABLE = "nullable"  # kind of a member whose JSON null is a value, distinct from absence


def _manifest_part(*path: str) -> Tuple[str, ...]:
    return ("iatp-capability-manifest",) + path


def _with_defaults(part: _P) -> _P:
    defaults: Mapping[str, Any] = getattr(part, "DEFAULTS")
    changes = {k: v for k, v in defaults.items() if getattr(part, k) is None}
    return dataclasses.replace(part, **changes) if changes else part


def _parse_time(value: Union[str, _dt.datetime], name: str) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValidationError([(format_path([name]), "Expected an aware `datetime` (with a UTC offset), got a naive one")])
        return value
    if isinstance(value, str):
        from ..timestamps import parse_timestamp

        try:
            return parse_timestamp(value)
        except TimestampError as exc:
            raise ValidationError([(format_path([name]), str(exc))]) from None
    raise ValidationError([(format_path([name]), f"Expected `datetime` or RFC 3339 `str`, got `{type(value).__name__}`")])
