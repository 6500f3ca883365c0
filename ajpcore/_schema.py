"""JSON Schema validation on jsonschema-rs, reported in ajpcore's wording.

jsonschema-rs validates (Draft 4 to 2020-12, ECMA-262 regexes, ``10.0`` is an
``integer``, ``true`` is not).  This adapter maps its errors to ``(path,
reason)`` pairs in msgspec's wording (``Expected `str`, got `null``` at
``$.signature``), every problem at once, in document order, and refuses with
``SchemaError`` what would not be enforced as written: a schema its meta-schema
refuses, an unknown format, a ``$ref`` outside the document (nothing is
fetched), an unknown keyword (a typo would drop a constraint), ``\\b``/``\\B``
in a pattern (Unicode word characters there, ASCII in ECMA-262).  Formats are
asserted: ``date-time`` by ``ajpcore.timestamps`` (strict RFC 3339), ``uri``,
``uri-reference`` (RFC 3986, IP literals per section 3.2.2) and ``email`` by
jsonschema-rs.
"""

from __future__ import annotations

import heapq
import json
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import jsonschema_rs

from ._jsoncopy import copy_json_collecting
from ._schema_prefix import cut, cut_is_exact
from ._schema_formats import FormatCheck, formats_holder, split_formats
from .errors import SchemaError, ValidationError, format_path
from .timestamps import is_timestamp

__all__ = ["CompiledSchema", "compile_schema", "FORMATS", "MAX_PROBLEMS"]

Problems = List[Tuple[str, str]]

FORMATS: Dict[str, Tuple[Optional[Callable[[str], bool]], str]] = {
    "date-time": (is_timestamp, "Invalid RFC 3339 date-time"),  # (checker, None: jsonschema-rs's own; reason)
    "uri": (None, "Invalid URI (RFC 3986)"),
    "uri-reference": (None, "Invalid URI reference (RFC 3986)"),
    "email": (None, "Invalid email address"),
}
_TYPES = {"object": "object", "array": "array", "string": "str", "boolean": "bool", "null": "null",
          "number": "number", "integer": "int"}
_GOT = {dict: "object", list: "array", str: "str", bool: "bool", int: "int", float: "float"}
_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
_SIZES = {"minLength": ("str", ">="), "maxLength": ("str", "<="), "minItems": ("array", ">="),
          "maxItems": ("array", "<="), "minProperties": ("object", ">="), "maxProperties": ("object", "<=")}
_TEMPLATES = {
    "required": "Object missing required field `{k.property}`",
    "pattern": "Expected `str` matching regex `{k.pattern}`",
    "uniqueItems": "Expected `array` with unique items",
    "anyOf": "Expected a value matching at least one of the {n} schemas in `anyOf`",
    "not": "Value must not match the schema in `not`",
    "falseSchema": "Value is not allowed here (schema `false`)",
    "multipleOf": "Expected `number` that is a multiple of {k.multiple_of}",
}
# At one path, reasons come in this keyword order; then in the engine's order.
_RANK = {k: i for i, k in enumerate(
    "type required minProperties maxProperties propertyNames minLength maxLength pattern format minimum maximum "
    "exclusiveMinimum exclusiveMaximum multipleOf minItems maxItems uniqueItems enum const".split())}
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_WORD_BOUNDARY = r"(^|[^\\])(\\\\)*\\[bB]"  # an unescaped \b or \B
# The 2020-12 meta-schema, stricter: no keyword it does not know (a typo would drop its
# constraint), no word boundary in a pattern (the engine's \w there is Unicode, ECMA-262's ASCII).
_STRICT = jsonschema_rs.validator_for({
    "$schema": _DRAFT_2020_12, "$id": "urn:ajpcore:strict-schema", "$dynamicAnchor": "meta", "$ref": _DRAFT_2020_12,
    "unevaluatedProperties": False,
    "properties": {"pattern": {"not": {"pattern": _WORD_BOUNDARY}},
                   "patternProperties": {"propertyNames": {"not": {"pattern": _WORD_BOUNDARY}}}},
}, offline=True)


def _got(v: Any) -> str:
    base = next((t for t in (bool, dict, list, str, int, float) if isinstance(v, t)), None)  # bool: an int too
    return "null" if v is None else _GOT[base] if base else type(v).__name__


def _show(v: Any) -> str:
    """A short JSON rendering of a value for a reason text."""
    if isinstance(v, (dict, list)) and len(v) > 8:
        return f"<{_got(v)} of {len(v)}>"
    try:
        text = json.dumps(v, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):  # deep or not JSON: its kind is enough
        text = f"<{_got(v)}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _num(n: Any) -> str:
    return str(int(n)) if isinstance(n, float) and n.is_integer() else repr(n)


class CompiledSchema:
    """A compiled JSON Schema: ``is_valid(value)``, ``errors(value)``, ``validate(value)``.

    Values are JSON values as ``ajpcore.decode`` returns them; any other value
    is invalid, its problem named by ``errors`` (``Expected a JSON value``).
    """

    __slots__ = ("schema", "_validator", "_reasons", "_fast", "_checks", "_fast_is_valid", "_formats_hold")

    def __init__(
        self, schema: Any, validator: Any, reasons: Mapping[str, str], fast: Any = None, checks: Sequence[FormatCheck] = ()
    ) -> None:
        self.schema = schema
        self._validator = validator
        self._reasons = reasons
        self._fast = fast  # the engine without Python format callbacks: checks confirm what it accepts
        self._checks = checks
        self._fast_is_valid = None if fast is None else fast.is_valid  # bound once: is_valid is the hot path
        self._formats_hold = formats_holder(checks)

    def is_valid(self, value: Any) -> bool:
        """True when ``value`` is valid (False for a value that is not JSON)."""
        try:
            fast = self._fast_is_valid
            if fast is not None and fast(value):
                return self._formats_hold(value)
            return bool(self._validator.is_valid(value))
        except ValueError:  # a set, a str subclass, a non-str member name...: the engine cannot read it
            return False

    def split(self) -> Tuple[Optional[Callable[[Any], bool]], Tuple[FormatCheck, ...]]:
        """``(engine, checks)``: the engine without Python format callbacks and the checks that confirm
        what it accepts (``_schema_formats``), or ``(None, ())`` where the formats were not split.

        A value the engine accepts is valid exactly when every check holds; one it refuses (or that
        makes it raise ``ValueError``) is decided by ``is_valid``, never refused on the engine's word.
        """
        return self._fast_is_valid, tuple(self._checks)

    def errors(self, value: Any) -> Problems:
        """The problems as ``(json_path, reason)``, in document order; ``[]`` when valid.

        At most ``MAX_PROBLEMS`` (100) are listed: beyond that, the first 100 in document
        order and one last ``("$", "... and N more problems not listed")``, or ``"... and
        more problems not listed"`` when they were found in the document with its long
        arrays cut (``_first_of_cut``: the engine then reads a few hundred items of an
        array, not 64,000).  The cost is linear in the document and in the problems read
        (each object's member order is read once, however many problems it holds), so a
        hostile document cannot make the report cost more than reading it.
        """
        if self.is_valid(value):
            return []
        listed = self._first_of_cut(value)
        if listed is not None:
            return listed
        problems: Problems = []
        try:
            found = list(self._validator.iter_errors(value))
        except ValueError:  # not JSON, or a wrong value nested past the 255 levels the engine hands back
            value = copy_json_collecting(value, problems)
            if problems:
                return _capped(problems)
            found = list(self._validator.iter_errors(_shallow(value, 250)))
        # Every problem is placed (cheap); only the first MAX_PROBLEMS in document order are worded.
        positions = _Positions(value)
        placed = [problem for e in found for problem in _placed(e, positions)]
        first = heapq.nsmallest(MAX_PROBLEMS, placed, key=_where)  # = sorted(placed, key=_where)[:MAX_PROBLEMS]
        worded = [self._worded(e, name, value) for _, e, name in first]
        if len(placed) > MAX_PROBLEMS:
            worded.append(_more(len(placed) - MAX_PROBLEMS))
        return worded or [("$", "Value does not match the schema")]

    def _first_of_cut(self, value: Any) -> Optional[Problems]:
        """The first ``MAX_PROBLEMS`` problems and ``... and more``, read from ``value`` with its long
        arrays cut (``_schema_prefix``), or None when the whole document must be read: nothing to
        cut, a schema the cut could fool, not plain JSON, or too few problems before the cut.

        The engine hands back every error at once, so reading the cut costs what the answer
        lists, not what the document holds: the cut keeps ``4 * MAX_PROBLEMS`` items of each
        array, then 8 times more while the problems before the first dropped item are too few.
        """
        limit = 4 * MAX_PROBLEMS
        while True:
            trimmed = cut(value, limit)
            if trimmed is None or trimmed.end is None or not cut_is_exact(self.schema, trimmed.paths):
                return None
            try:
                found = list(self._validator.iter_errors(trimmed.value))
            except ValueError:
                return None
            positions = _Positions(trimmed.value)
            end = trimmed.end
            placed = [problem for e in found for problem in _placed(e, positions) if problem[0][0] < end]
            if len(placed) > MAX_PROBLEMS:
                first = heapq.nsmallest(MAX_PROBLEMS, placed, key=_where)
                return [self._worded(e, name, value) for _, e, name in first] + [_more(None)]
            limit *= 8

    def validate(self, value: Any) -> None:
        """Return ``None`` when ``value`` is valid, else raise ``ValidationError`` listing every problem."""
        if not self.is_valid(value):
            raise ValidationError(self.errors(value))

    def _worded(self, e: Any, name: Optional[str], value: Any) -> Tuple[str, str]:
        """The ``(path, reason)`` of one engine error (of its unknown member ``name``, if any)."""
        steps = list(e.instance_path)
        here, kind, keyword = _at(value, steps), e.kind, e.kind.name
        node = _at(self.schema, e.schema_path[:-1])  # the subschema of the failing keyword
        node = node if isinstance(node, dict) else {}
        path = format_path(steps)
        if name is not None:
            return path, f"Object contains unknown field `{name}`"
        if keyword == "type":
            names = node.get("type", kind.types)
            names = [names] if isinstance(names, str) else names
            reason = f"Expected `{' | '.join(_TYPES.get(n, n) for n in names)}`, got `{_got(here)}`"
        elif keyword == "required" and e.schema_path[-1] == "dependentRequired":
            deps = node["dependentRequired"].items()
            cause = next((k for k, needs in deps if k in here and kind.property in needs), "?")
            reason = f"Object missing field `{kind.property}` required by `{cause}`"
        elif keyword in _BOUNDS:
            name = "int" if node.get("type") in ("integer", ["integer"]) else "number"
            reason = f"Expected `{name}` {_BOUNDS[keyword]} {_num(kind.limit)}"
        elif keyword in _SIZES:
            reason = "Expected `{}` of length {} {}".format(*_SIZES[keyword], kind.limit)
        elif keyword == "format":
            reason = self._reasons.get(kind.format, f"Invalid `{kind.format}`")
        elif keyword == "enum":
            reason = f"Invalid enum value {_show(here)} (expected one of {', '.join(map(_show, kind.options))})"
        elif keyword == "const":
            reason = f"Expected {_show(kind.expected_value)}, got {_show(here)}"
        elif keyword == "propertyNames":
            reason = f"Invalid property name {_show(kind.error.instance)}"
        elif keyword == "oneOf":
            many = isinstance(kind, jsonschema_rs.ValidationErrorKind.OneOfMultipleValid)
            hits = f"it matches {sum(1 for errs in kind.context if not errs)}" if many else "it matches none"
            reason = f"Expected a value matching exactly one of the {len(kind.context)} schemas in `oneOf`, {hits}"
        else:  # a template; for contains, unevaluatedItems, content*: the engine's own words
            n = len(getattr(kind, "context", ()))
            reason = _TEMPLATES[keyword].format(k=kind, n=n) if keyword in _TEMPLATES else e.message
        return path, reason


_Placed = Tuple[Tuple[Tuple[int, ...], int], Any, Optional[str]]


def _placed(e: Any, positions: "_Positions") -> Iterator[_Placed]:
    """The problems of one engine error, each as ((document position, keyword rank), error, unknown member)."""
    steps = list(e.instance_path)
    kind = e.kind
    keyword = kind.name
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        for name in kind.unexpected:  # reported at the object, ordered as its members
            yield (positions.of(steps + [name]), -1), e, name
        return
    yield (positions.of(steps), _RANK.get(keyword, len(_RANK))), e, None


def _where(problem: _Placed) -> Tuple[Tuple[int, ...], int]:
    return problem[0]


def _at(doc: Any, steps: Any) -> Any:
    for step in steps:
        doc = doc[step]
    return doc


MAX_PROBLEMS = 100
"""How many problems ``CompiledSchema.errors`` lists (then one line counts the rest)."""


def _capped(problems: Problems) -> Problems:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return problems[:MAX_PROBLEMS] + [_more(len(problems) - MAX_PROBLEMS)]


def _more(rest: Optional[int]) -> Tuple[str, str]:
    """The line after the listed problems: how many more, or only that there are more (a cut document)."""
    if rest is None:
        return "$", "... and more problems not listed"
    return "$", f"... and {rest} more problem{'s' if rest > 1 else ''} not listed"


def _member_index(obj: Dict[str, Any]) -> Dict[str, int]:
    """Each member name of ``obj`` to its place in document (insertion) order."""
    return {name: i for i, name in enumerate(obj)}


class _Positions:
    """Where paths lead in document order, each object's member order read once.

    ``of(steps)`` is the tuple of member and item indices ``steps`` take from the
    root.  An object's names-to-places map is built on first use and kept for
    the call (keyed by identity: the document is alive and unchanged meanwhile),
    so k problems under an object of m members cost O(k + m), not O(k * m).
    """

    __slots__ = ("_root", "_indices")

    def __init__(self, root: Any) -> None:
        self._root = root
        self._indices: Dict[int, Dict[str, int]] = {}

    def of(self, steps: List[Any]) -> Tuple[int, ...]:
        out = []
        doc = self._root
        for step in steps:
            if isinstance(doc, dict):
                index = self._indices.get(id(doc))
                if index is None:
                    index = self._indices[id(doc)] = _member_index(doc)
                out.append(index[step])
            else:
                out.append(step)
            doc = doc[step]
        return tuple(out)


def _shallow(value: Any, depth: int) -> Any:
    """``value`` with its containers below ``depth`` levels emptied, kinds kept (the engine can hand it back)."""
    if isinstance(value, dict):
        return {k: _shallow(v, depth - 1) for k, v in value.items()} if depth else {}
    if isinstance(value, list):
        return [_shallow(v, depth - 1) for v in value] if depth else []
    return value


def compile_schema(
    schema: Any, *, formats: Optional[Mapping[str, Optional[Callable[[str], bool]]]] = None
) -> CompiledSchema:
    """Compile a JSON Schema document into a ``CompiledSchema`` (jsonschema-rs, formats asserted).

    ``formats`` adds format checkers (``name -> callable(str) -> bool``) or makes
    a format annotation-only (``name -> None``).  Raises ``SchemaError`` for a
    schema that is invalid or would not be enforced as written (module docstring).
    """
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"a schema is an object or a boolean, got `{_got(schema)}`")
    checkers = {name: checker for name, (checker, _) in FORMATS.items() if checker is not None}
    reasons = {name: reason for name, (_, reason) in FORMATS.items()}
    for name, given in (formats or {}).items():
        checkers[name] = _annotation if given is None else given
        reasons[name] = f"Invalid `{name}`"
    strict = isinstance(schema, dict) and schema.get("$schema", _DRAFT_2020_12) == _DRAFT_2020_12
    try:
        # Of the strict meta-schema's problems, the deepest names the culprit.
        refused = max(_STRICT.iter_errors(schema) if strict else (), key=lambda e: len(e.instance_path), default=None)
        options: Dict[str, Any] = dict(validate_formats=True, ignore_unknown_formats=False, offline=True,
                       email_options=jsonschema_rs.EmailOptions(allow_display_text=False))  # RFC 5321 Mailbox only
        validator = refused or jsonschema_rs.validator_for(schema, formats=checkers, **options)
        checks = None if refused else split_formats(schema, checkers)
        fast = checks and jsonschema_rs.validator_for(schema, **options)
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        raise SchemaError(f"cannot compile the schema: {str(exc).splitlines()[0]}") from None
    if refused is not None:
        where = "/".join(map(str, ["#", *refused.instance_path]))
        why = "`\\b`/`\\B` reads Unicode words here, ASCII in ECMA-262" if "not" in refused.schema_path else refused.message
        raise SchemaError(f"schema refused at {where}: {why}")
    return CompiledSchema(schema, validator, reasons, fast, checks or ())


def _annotation(text: str) -> bool:
    return True
