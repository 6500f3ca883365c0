"""A JSON Schema compiler: a schema becomes two closures, a fast yes/no check and an error collector.

Supported: Draft 2020-12, and the Draft-07 documents that use the same keywords
(``definitions``, array-form ``items`` with ``additionalItems``).  Keywords:
``type`` (a name or a list; ``integer`` is any number with no fraction, ``1.0``
included; ``bool`` is never a number), ``enum``, ``const`` (JSON equality: ``1 ==
1.0``, ``true != 1``), ``properties``, ``required``, ``additionalProperties``,
``patternProperties``, ``propertyNames``, ``minProperties``, ``maxProperties``,
``dependentRequired``, ``items``, ``prefixItems``, ``additionalItems``,
``minItems``, ``maxItems``, ``uniqueItems``, ``minLength``, ``maxLength`` (code
points), ``pattern`` (ECMA-262, translated, see ``ecma_regex``), ``format``,
``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``allOf``,
``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``, ``$ref`` to ``#`` and
``#/json/pointer`` inside the same document, ``$defs``/``definitions``.
Annotations (``title``, ``description``, ``default``, ``examples``, ``$comment``,
``$schema``, root ``$id``, ``deprecated``, ``readOnly``, ``writeOnly``) are ignored.
Any other keyword raises ``SchemaError`` at compile time: a constraint is never
silently dropped.

Formats are asserted, not annotations: ``date-time`` (strict RFC 3339, see
``ajpcore.timestamps``), ``uri`` and ``uri-reference`` (RFC 3986 grammar),
``email`` (dot-atom local part ``@`` a host name or an address literal; quoted
local parts are refused).  Pass ``formats={"name": checker | None}`` to add a
format or to make one annotation-only (``None``) on purpose.  An unknown format is
a ``SchemaError``.

Every problem is reported as ``(path, reason)``: ``path`` in
``ajpcore.errors.format_path`` form (``$.budget.max_usd``) and ``reason`` in msgspec's
wording (``Expected `number`, got `str```).  ``ValidationError`` renders them.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import SchemaError, ValidationError, format_path
from .timestamps import is_timestamp

__all__ = ["CompiledSchema", "compile_schema", "ecma_regex", "json_equal_key", "FORMATS"]

Path = Tuple[Any, ...]
Problems = List[Tuple[str, str]]
Check = Callable[[Any], bool]
Collect = Callable[[Any, Path, Problems], None]

_NoneType = type(None)
_EXACT = frozenset((dict, list, str, int, float, bool, _NoneType))
_PY_TYPES = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (_NoneType,),
    "number": (int, float),
    "integer": (int,),
}
_EXPECTED_NAME = {
    "object": "object",
    "array": "array",
    "string": "str",
    "boolean": "bool",
    "null": "null",
    "number": "number",
    "integer": "int",
}
_GOT_NAME = {dict: "object", list: "array", str: "str", bool: "bool", _NoneType: "null", int: "int", float: "float"}

_ANNOTATIONS = frozenset(
    ("$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated",
     "readOnly", "writeOnly", "$defs", "definitions")
)
_KEYWORDS = frozenset(
    ("type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties",
     "propertyNames", "minProperties", "maxProperties", "dependentRequired", "items", "prefixItems",
     "additionalItems", "minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern",
     "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "allOf", "anyOf",
     "oneOf", "not", "if", "then", "else", "$ref")
)
_DRAFTS = {
    None: "2020-12",
    "https://json-schema.org/draft/2020-12/schema": "2020-12",
    "https://json-schema.org/draft/2020-12/schema#": "2020-12",
    "http://json-schema.org/draft-07/schema#": "7",
    "http://json-schema.org/draft-07/schema": "7",
}


def _base_type(v: Any) -> Optional[type]:
    """The JSON kind of ``v`` as one of the exact builtin types (subclasses mapped), or None."""
    if isinstance(v, bool):
        return bool
    for t in (dict, list, str, int, float):
        if isinstance(v, t):
            return t
    return _NoneType if v is None else None


def _got(v: Any) -> str:
    name = _GOT_NAME.get(type(v))
    if name is None:
        base = _base_type(v)
        name = _GOT_NAME[base] if base is not None else type(v).__name__
    return name


def json_equal_key(v: Any, _depth: int = 0) -> Any:
    """A hashable key such that two JSON values are equal (JSON Schema equality) iff their keys are.

    Numbers compare by value (``1 == 1.0``), booleans are not numbers, objects
    ignore member order.  Non-JSON values, and values nested deeper than 256
    levels (no schema constant is), compare by identity: never a RecursionError.
    """
    t = _base_type(v)
    if t is bool:
        return ("b", v)
    if t is int or t is float:
        return ("n", v)
    if t is str:
        return ("s", v)
    if t is _NoneType:
        return ("z",)
    if _depth < 256:
        if t is list:
            return ("a", tuple(json_equal_key(x, _depth + 1) for x in v))
        if t is dict:
            return ("o", frozenset((k, json_equal_key(x, _depth + 1)) for k, x in v.items()))
    return ("?", id(v))


def _show(v: Any) -> str:
    """A short JSON-ish rendering of a value for a reason text."""
    import json

    if isinstance(v, (dict, list)) and len(v) > 8:
        return f"<{_got(v)} of {len(v)}>"
    try:
        text = json.dumps(v, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):  # deep or non-JSON: a short description is enough
        text = f"<{_got(v)}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _num(n: Any) -> str:
    return repr(n) if isinstance(n, float) and not n.is_integer() else str(int(n)) if isinstance(n, float) else str(n)


# -- ECMA-262 regular expressions ------------------------------------------------

# ECMA-262 22.2.2.9 (CharacterClassEscape) and WhiteSpace/LineTerminator (12.2, 12.3).
_ECMA_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_", "s": _ECMA_SPACE}
_CONTROL_ESCAPES = {"t": "\\t", "n": "\\n", "v": "\\x0b", "f": "\\x0c", "r": "\\r", "0": "\\x00"}
_QUANT = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")
_HEX = "0123456789abcdefABCDEF"


def ecma_regex(pattern: str) -> "re.Pattern[str]":
    """Compile an ECMA-262 (no flags) regular expression into a Python ``re`` pattern with the same matches.

    Matching is by code point, as with the ``u`` flag JSON Schema 2020-12 (section
    6.4) recommends.  Translated: ``.`` (no line terminators), ``$`` (end of input only), ``\\d \\w
    \\s \\D \\W \\S`` (ECMA classes; ``\\w``/``\\d`` ASCII, ``\\s`` Unicode white
    space), ``\\b``, ``{`` that is no quantifier (a literal, Annex B), named groups.
    Refused with ``SchemaError`` where the two engines may disagree: back
    references, ``\\c``, ``\\p``, ``\\u{...}``, ``[]``, ``[^]``, negated class
    escapes inside a class, unknown letter escapes.
    """
    if not isinstance(pattern, str):
        raise SchemaError(f"`pattern` must be a string, got `{_got(pattern)}`")
    out: List[str] = []
    i, n = 0, len(pattern)

    def fail(why: str) -> SchemaError:
        return SchemaError(f"unsupported ECMA-262 regex {pattern!r}: {why}")

    def escape(j: int, in_class: bool) -> Tuple[str, int]:
        if j + 1 >= n:
            raise fail("trailing backslash")
        c = pattern[j + 1]
        if c in _CLASS_ESCAPES:
            body = _CLASS_ESCAPES[c]
            return (body if in_class else "[" + body + "]"), j + 2
        if c in "DWS":
            if in_class:
                raise fail(f"`\\{c}` inside a character class")
            return "[^" + _CLASS_ESCAPES[c.lower()] + "]", j + 2
        if c in "bB":
            if in_class:
                if c == "b":
                    return "\\x08", j + 2
                raise fail("`\\B` inside a character class")
            return "\\" + c, j + 2
        if c in _CONTROL_ESCAPES:
            if c == "0" and j + 2 < n and pattern[j + 2].isdigit():
                raise fail("octal escape")
            return _CONTROL_ESCAPES[c], j + 2
        if c == "x":
            h = pattern[j + 2 : j + 4]
            if len(h) == 2 and all(ch in _HEX for ch in h):
                return "\\x" + h, j + 4
            raise fail("malformed `\\x` escape")
        if c == "u":
            h = pattern[j + 2 : j + 6]
            if len(h) == 4 and all(ch in _HEX for ch in h):
                return "\\u" + h, j + 6
            raise fail("`\\u` escape other than `\\uXXXX`")
        if c.isalnum() or c == "_":
            raise fail(f"escape `\\{c}`")
        return re.escape(c), j + 2

    while i < n:
        c = pattern[i]
        if c == "\\":
            text, i = escape(i, False)
            out.append(text)
        elif c == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
            i += 1
        elif c == "$":
            out.append("(?!(?s:.))")
            i += 1
        elif c in "*+?" or (c == "{" and _QUANT.match(pattern, i)):
            if c == "{":
                m = _QUANT.match(pattern, i)
                out.append(m.group())  # type: ignore[union-attr]
                i = m.end()  # type: ignore[union-attr]
            else:
                out.append(c)
                i += 1
            if i < n and pattern[i] == "?":  # lazy: the same in both dialects
                out.append("?")
                i += 1
            if i < n and pattern[i] == "+":
                # Python 3.11 reads `a++` as possessive; ECMA-262 has no such quantifier.
                raise fail("possessive quantifier")
        elif c == "{":  # not a quantifier: a literal brace (ECMA-262 Annex B)
            out.append("\\{")
            i += 1
        elif c == "}":
            out.append("\\}")
            i += 1
        elif c == "(":
            if pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!":
                out.append("(?P<")
                i += 3
            elif pattern.startswith("(?", i) and not (
                pattern.startswith("(?:", i) or pattern.startswith("(?=", i) or pattern.startswith("(?!", i)
                or pattern.startswith("(?<=", i) or pattern.startswith("(?<!", i)
            ):
                raise fail("group modifier")
            else:
                out.append("(")
                i += 1
        elif c == "[":
            i += 1
            negate = i < n and pattern[i] == "^"
            if negate:
                i += 1
            if i < n and pattern[i] == "]":
                raise fail("empty character class")
            parts: List[str] = []
            # A `-` makes a range only between two single characters (ECMA-262 Annex B
            # reads `[\d-z]` and `[a-c-e]` with a literal dash; Python may not).
            range_start = False
            in_range = False
            while True:
                if i >= n:
                    raise fail("unterminated character class")
                d = pattern[i]
                if d == "]":
                    i += 1
                    break
                if d == "-" and range_start and i + 1 < n and pattern[i + 1] != "]":
                    parts.append("-")
                    range_start, in_range = False, True
                    i += 1
                    continue
                if d == "\\":
                    escaped = pattern[i + 1 : i + 2]
                    text, i = escape(i, True)
                    single = escaped not in _CLASS_ESCAPES
                elif d == "-":
                    text, single = "\\-", True
                    i += 1
                else:
                    text, single = (re.escape(d) if d in "[]&~|^\\" else d), True
                    i += 1
                if in_range and not single:
                    raise fail("a class escape as a range end")
                parts.append(text)
                range_start = single and not in_range
                in_range = False
            out.append("[" + ("^" if negate else "") + "".join(parts) + "]")
        else:
            out.append(c)
            i += 1
    try:
        return re.compile("".join(out), re.ASCII)
    except re.error as exc:
        raise fail(str(exc)) from None


# -- formats ---------------------------------------------------------------------

# RFC 3986 section 3 with plain character classes (fast in `re`); `%` is allowed in the
# classes and every `%` must then start a pct-encoded triplet (section 2.1).
_PCHAR = r"A-Za-z0-9\-._~!$&'()*+,;=:@%"
_REG_NAME = r"A-Za-z0-9\-._~!$&'()*+,;=%"
_AUTHORITY = (
    rf"(?:[{_REG_NAME}:]*@)?"
    rf"(?:\[[0-9A-Fa-f:.]+\]|\[[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+\]|[{_REG_NAME}]*)"
    r"(?::[0-9]*)?"
)
_QUERY_FRAGMENT = rf"(?:\?[{_PCHAR}/?]*)?(?:#[{_PCHAR}/?]*)?"
_AFTER_AUTHORITY = rf"(?:/[{_PCHAR}/]*)?"
_PATH_ABSOLUTE = rf"/(?:[{_PCHAR}][{_PCHAR}/]*)?"
_URI = re.compile(
    rf"[A-Za-z][A-Za-z0-9+\-.]*:(?://{_AUTHORITY}{_AFTER_AUTHORITY}|{_PATH_ABSOLUTE}|[{_PCHAR}]+(?:/[{_PCHAR}/]*)?|)"
    rf"{_QUERY_FRAGMENT}",
    re.ASCII,
).fullmatch
_RELATIVE_REF = re.compile(
    rf"(?://{_AUTHORITY}{_AFTER_AUTHORITY}|{_PATH_ABSOLUTE}|[{_REG_NAME}@]+(?:/[{_PCHAR}/]*)?|)"
    rf"{_QUERY_FRAGMENT}",
    re.ASCII,
).fullmatch
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})").search
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(
    rf"{_ATEXT}(?:\.{_ATEXT})*@(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\])", re.ASCII
)


def _is_uri(s: str) -> bool:
    return _URI(s) is not None and ("%" not in s or _BAD_PERCENT(s) is None)


def _is_uri_reference(s: str) -> bool:
    return (_URI(s) is not None or _RELATIVE_REF(s) is not None) and ("%" not in s or _BAD_PERCENT(s) is None)


def _is_email(s: str) -> bool:
    return len(s) <= 254 and _EMAIL.fullmatch(s) is not None and len(s.partition("@")[0]) <= 64


FORMATS: Dict[str, Tuple[Callable[[str], bool], str]] = {
    "date-time": (is_timestamp, "Invalid RFC 3339 date-time"),
    "uri": (_is_uri, "Invalid URI (RFC 3986)"),
    "uri-reference": (_is_uri_reference, "Invalid URI reference (RFC 3986)"),
    "email": (_is_email, "Invalid email address"),
}


# -- the compiler ----------------------------------------------------------------


def _always(v: Any) -> bool:
    return True


def _never(v: Any) -> bool:
    return False


def _collect_nothing(v: Any, path: Path, errors: Problems) -> None:
    return None


class _Node:
    """A compiled subschema: ``ok(v) -> bool`` (no allocation) and ``collect(v, path, errors)``."""

    __slots__ = ("ok", "collect")

    def __init__(self, ok: Check, collect: Collect) -> None:
        self.ok = ok
        self.collect = collect


class _Compiler:
    def __init__(self, root: Any, formats: Mapping[str, Optional[Callable[[str], bool]]]) -> None:
        self.root = root
        self.draft = _DRAFTS.get(root.get("$schema") if isinstance(root, dict) else None)
        if self.draft is None:
            raise SchemaError(f"unsupported `$schema` {root.get('$schema')!r} (Draft 2020-12 or Draft-07)")
        self.formats: Dict[str, Optional[Tuple[Callable[[str], bool], str]]] = dict(FORMATS)
        for name, checker in formats.items():
            self.formats[name] = None if checker is None else (checker, f"Invalid `{name}`")
        self.refs: Dict[str, _Node] = {}
        self.memo: Dict[int, _Node] = {}

    # -- references (compiled once, so recursive schemas terminate) --

    def ref(self, ref: Any, where: str) -> _Node:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise SchemaError(f"`$ref` {ref!r} at {where}: only `#` and `#/pointer` in the same document")
        node = self.refs.get(ref)
        if node is not None:
            return node
        target = self.root
        pointer = ref[1:]
        if pointer:
            if not pointer.startswith("/"):
                raise SchemaError(f"`$ref` {ref!r} at {where}: anchors are not supported")
            from urllib.parse import unquote

            for token in pointer[1:].split("/"):
                token = unquote(token).replace("~1", "/").replace("~0", "~")
                if isinstance(target, dict) and token in target:
                    target = target[token]
                elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                    target = target[int(token)]
                else:
                    raise SchemaError(f"`$ref` {ref!r} at {where} does not resolve")
        cell: List[_Node] = []

        def ok(v: Any) -> bool:
            return cell[0].ok(v)

        def collect(v: Any, path: Path, errors: Problems) -> None:
            cell[0].collect(v, path, errors)

        node = _Node(ok, collect)
        self.refs[ref] = node
        cell.append(self.compile(target, ref))
        return node

    # -- one subschema --

    def compile(self, schema: Any, where: str = "#") -> _Node:
        key = id(schema)
        node = self.memo.get(key)
        if node is None:
            node = self.memo[key] = self._compile(schema, where)
        return node

    def _compile(self, schema: Any, where: str) -> _Node:
        if schema is True or schema == {}:
            return _Node(_always, _collect_nothing)
        if schema is False:

            def never_collect(v: Any, path: Path, errors: Problems) -> None:
                errors.append((format_path(path), "Value is not allowed here (schema `false`)"))

            return _Node(_never, never_collect)
        if not isinstance(schema, dict):
            raise SchemaError(f"schema at {where} must be an object or a boolean")
        unknown = [k for k in schema if k not in _KEYWORDS and k not in _ANNOTATIONS]
        if unknown:
            raise SchemaError(f"unsupported keyword(s) {', '.join(map(repr, sorted(unknown)))} at {where}")
        if "$id" in schema and where != "#":
            raise SchemaError(f"nested `$id` at {where} is not supported")
        for defs in ("$defs", "definitions"):
            if defs in schema:
                if not isinstance(schema[defs], dict):
                    raise SchemaError(f"`{defs}` at {where} must be an object")
                for name in schema[defs]:
                    self.ref(f"{where}/{defs}/{_escape_pointer(name)}" if where.startswith("#") else "#", where)
        if "$ref" in schema and self.draft == "7":
            siblings = [k for k in schema if k in _KEYWORDS and k != "$ref"]
            if siblings:
                raise SchemaError(f"Draft-07 ignores {siblings} beside `$ref` at {where}: ambiguous, refused")

        type_names = self._types(schema, where)
        kinds: Dict[type, Tuple[Check, Collect]] = {}
        string = self._string(schema, where)
        if string is not None:
            kinds[str] = string
        number = self._number(schema, where, type_names)
        if number is not None:
            kinds[int] = kinds[float] = number
        obj = self._object(schema, where)
        if obj is not None:
            kinds[dict] = obj
        arr = self._array(schema, where)
        if arr is not None:
            kinds[list] = arr
        generics = self._generic(schema, where)
        return _assemble(type_names, kinds, generics)

    def _types(self, schema: dict, where: str) -> Optional[List[str]]:
        if "type" not in schema:
            return None
        t = schema["type"]
        names = [t] if isinstance(t, str) else t
        if not isinstance(names, list) or not names or any(n not in _PY_TYPES for n in names):
            raise SchemaError(f"bad `type` {t!r} at {where}")
        return names

    def _string(self, schema: dict, where: str) -> Optional[Tuple[Check, Collect]]:
        lo = _count(schema, "minLength", where)
        hi = _count(schema, "maxLength", where)
        regex = ecma_regex(schema["pattern"]) if "pattern" in schema else None
        fmt = None
        if "format" in schema:
            name = schema["format"]
            if name not in self.formats:
                raise SchemaError(f"unknown `format` {name!r} at {where}")
            fmt = self.formats[name]
        if lo is None and hi is None and regex is None and fmt is None:
            return None
        checks: List[Check] = []
        reasons: List[Tuple[Check, str]] = []
        if lo is not None:
            c: Check = (lambda v, lo=lo: len(v) >= lo)
            checks.append(c)
            reasons.append((c, f"Expected `str` of length >= {lo}"))
        if hi is not None:
            c = lambda v, hi=hi: len(v) <= hi  # noqa: E731
            checks.append(c)
            reasons.append((c, f"Expected `str` of length <= {hi}"))
        if regex is not None:
            c = lambda v, search=regex.search: search(v) is not None  # noqa: E731
            checks.append(c)
            reasons.append((c, f"Expected `str` matching regex `{schema['pattern']}`"))
        if fmt is not None:
            checks.append(fmt[0])
            reasons.append((fmt[0], fmt[1]))
        return _all_of_checks(checks), _reasons_collect(reasons)

    def _number(self, schema: dict, where: str, type_names: Optional[List[str]]) -> Optional[Tuple[Check, Collect]]:
        name = "int" if type_names == ["integer"] else "number"
        reasons: List[Tuple[Check, str]] = []
        for key, op in (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
            if key not in schema:
                continue
            bound = schema[key]
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise SchemaError(f"`{key}` at {where} must be a number")
            if op == ">=":
                c: Check = lambda v, b=bound: v >= b  # noqa: E731
            elif op == "<=":
                c = lambda v, b=bound: v <= b  # noqa: E731
            elif op == ">":
                c = lambda v, b=bound: v > b  # noqa: E731
            else:
                c = lambda v, b=bound: v < b  # noqa: E731
            reasons.append((c, f"Expected `{name}` {op} {_num(bound)}"))
        if not reasons:
            return None
        return _all_of_checks([c for c, _ in reasons]), _reasons_collect(reasons)

    def _object(self, schema: dict, where: str) -> Optional[Tuple[Check, Collect]]:
        keys = ("properties", "required", "additionalProperties", "patternProperties", "propertyNames",
                "minProperties", "maxProperties", "dependentRequired")
        if not any(k in schema for k in keys):
            return None
        props_schema = schema.get("properties", {})
        if not isinstance(props_schema, dict):
            raise SchemaError(f"`properties` at {where} must be an object")
        props = {k: self.compile(s, f"{where}/properties/{_escape_pointer(k)}") for k, s in props_schema.items()}
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required) or len(set(required)) != len(required):
            raise SchemaError(f"`required` at {where} must be a list of distinct strings")
        required = tuple(required)
        patterns = [
            (ecma_regex(p).search, self.compile(s, f"{where}/patternProperties/{_escape_pointer(p)}"))
            for p, s in schema.get("patternProperties", {}).items()
        ]
        addl = schema.get("additionalProperties", True)
        addl_node = None if addl is True else self.compile(addl, f"{where}/additionalProperties")
        names = self.compile(schema["propertyNames"], f"{where}/propertyNames") if "propertyNames" in schema else None
        min_p = _count(schema, "minProperties", where)
        max_p = _count(schema, "maxProperties", where)
        dependent = schema.get("dependentRequired", {})
        if not isinstance(dependent, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in dependent.values()
        ):
            raise SchemaError(f"`dependentRequired` at {where} must map names to lists of names")
        prop_ok = {k: n.ok for k, n in props.items()}
        addl_ok = None if addl_node is None else addl_node.ok
        simple = not patterns and names is None and min_p is None and max_p is None and not dependent

        if simple:
            if addl_ok is None:

                def ok(v: dict) -> bool:
                    for k in required:
                        if k not in v:
                            return False
                    for k, x in v.items():
                        c = prop_ok.get(k)
                        if c is not None and not c(x):
                            return False
                    return True

            else:

                def ok(v: dict) -> bool:
                    for k in required:
                        if k not in v:
                            return False
                    for k, x in v.items():
                        c = prop_ok.get(k)
                        if c is None:
                            if not addl_ok(x):
                                return False
                        elif not c(x):
                            return False
                    return True

        else:

            def ok(v: dict) -> bool:
                for k in required:
                    if k not in v:
                        return False
                if min_p is not None and len(v) < min_p:
                    return False
                if max_p is not None and len(v) > max_p:
                    return False
                for k, deps in dependent.items():
                    if k in v:
                        for d in deps:
                            if d not in v:
                                return False
                for k, x in v.items():
                    if names is not None and not names.ok(k):
                        return False
                    matched = False
                    c = prop_ok.get(k)
                    if c is not None:
                        matched = True
                        if not c(x):
                            return False
                    for search, node in patterns:
                        if search(k) is not None:
                            matched = True
                            if not node.ok(x):
                                return False
                    if not matched and addl_ok is not None and not addl_ok(x):
                        return False
                return True

        addl_is_false = addl is False

        def collect(v: dict, path: Path, errors: Problems) -> None:
            here = None
            for k in required:
                if k not in v:
                    here = here or format_path(path)
                    errors.append((here, f"Object missing required field `{k}`"))
            if min_p is not None and len(v) < min_p:
                errors.append((format_path(path), f"Expected `object` of length >= {min_p}"))
            if max_p is not None and len(v) > max_p:
                errors.append((format_path(path), f"Expected `object` of length <= {max_p}"))
            for k, deps in dependent.items():
                if k in v:
                    for d in deps:
                        if d not in v:
                            errors.append((format_path(path), f"Object missing field `{d}` required by `{k}`"))
            for k, x in v.items():
                if names is not None and not names.ok(k):
                    errors.append((format_path(path), f"Invalid property name {_show(k)}"))
                matched = False
                node = props.get(k)
                if node is not None:
                    matched = True
                    if not node.ok(x):
                        node.collect(x, path + (k,), errors)
                for search, pnode in patterns:
                    if search(k) is not None:
                        matched = True
                        if not pnode.ok(x):
                            pnode.collect(x, path + (k,), errors)
                if not matched and addl_node is not None and not addl_node.ok(x):
                    if addl_is_false:
                        errors.append((format_path(path), f"Object contains unknown field `{k}`"))
                    else:
                        addl_node.collect(x, path + (k,), errors)

        return ok, collect

    def _array(self, schema: dict, where: str) -> Optional[Tuple[Check, Collect]]:
        keys = ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems")
        if not any(k in schema for k in keys):
            return None
        prefix: List[_Node] = []
        rest: Optional[_Node] = None
        items = schema.get("items")
        if self.draft == "7":
            if "prefixItems" in schema:
                raise SchemaError(f"`prefixItems` in a Draft-07 schema at {where}")
            if isinstance(items, list):
                prefix = [self.compile(s, f"{where}/items/{i}") for i, s in enumerate(items)]
                if "additionalItems" in schema:
                    rest = self.compile(schema["additionalItems"], f"{where}/additionalItems")
            else:
                if "additionalItems" in schema:
                    raise SchemaError(f"`additionalItems` without array `items` at {where}: no effect, refused")
                if items is not None:
                    rest = self.compile(items, f"{where}/items")
        else:
            if "additionalItems" in schema:
                raise SchemaError(f"`additionalItems` is not a Draft 2020-12 keyword (at {where})")
            if isinstance(items, list):
                raise SchemaError(f"array-form `items` is not Draft 2020-12 (at {where}): use `prefixItems`")
            prefix = [self.compile(s, f"{where}/prefixItems/{i}") for i, s in enumerate(schema.get("prefixItems", []))]
            if items is not None:
                rest = self.compile(items, f"{where}/items")
        lo = _count(schema, "minItems", where)
        hi = _count(schema, "maxItems", where)
        unique = schema.get("uniqueItems", False)
        if not isinstance(unique, bool):
            raise SchemaError(f"`uniqueItems` at {where} must be a boolean")
        np = len(prefix)
        rest_ok = None if rest is None else rest.ok

        def is_unique(v: list) -> bool:
            seen = set()
            for x in v:
                key = json_equal_key(x)
                if key in seen:
                    return False
                seen.add(key)
            return True

        def ok(v: list) -> bool:
            if lo is not None and len(v) < lo:
                return False
            if hi is not None and len(v) > hi:
                return False
            for i in range(min(np, len(v))):
                if not prefix[i].ok(v[i]):
                    return False
            if rest_ok is not None:
                for i in range(np, len(v)):
                    if not rest_ok(v[i]):
                        return False
            return not unique or is_unique(v)

        if np == 0 and lo is None and hi is None and not unique and rest_ok is not None:

            def ok(v: list) -> bool:  # noqa: F811 - the common shape, one loop
                for x in v:
                    if not rest_ok(x):
                        return False
                return True

        def collect(v: list, path: Path, errors: Problems) -> None:
            if lo is not None and len(v) < lo:
                errors.append((format_path(path), f"Expected `array` of length >= {lo}"))
            if hi is not None and len(v) > hi:
                errors.append((format_path(path), f"Expected `array` of length <= {hi}"))
            for i, x in enumerate(v):
                node = prefix[i] if i < np else rest
                if node is not None and not node.ok(x):
                    node.collect(x, path + (i,), errors)
            if unique and not is_unique(v):
                errors.append((format_path(path), "Expected `array` with unique items"))

        return ok, collect

    def _generic(self, schema: dict, where: str) -> List[Tuple[Check, Collect]]:
        out: List[Tuple[Check, Collect]] = []
        if "enum" in schema:
            values = schema["enum"]
            if not isinstance(values, list) or not values:
                raise SchemaError(f"`enum` at {where} must be a non-empty list")
            keys = frozenset(json_equal_key(x) for x in values)
            if all(type(x) is str for x in values):
                strings = frozenset(values)

                def enum_ok(v: Any) -> bool:
                    return v in strings if type(v) is str else json_equal_key(v) in keys

            else:

                def enum_ok(v: Any) -> bool:
                    return json_equal_key(v) in keys

            allowed = ", ".join(_show(x) for x in values)
            out.append((enum_ok, _simple_collect(enum_ok, lambda v: f"Invalid enum value {_show(v)} (expected one of {allowed})")))
        if "const" in schema:
            const_key = json_equal_key(schema["const"])
            shown = _show(schema["const"])

            def const_ok(v: Any) -> bool:
                return json_equal_key(v) == const_key

            out.append((const_ok, _simple_collect(const_ok, lambda v: f"Expected {shown}, got {_show(v)}")))
        if "$ref" in schema:
            node = self.ref(schema["$ref"], where)
            out.append((node.ok, node.collect))
        for key in ("allOf", "anyOf", "oneOf"):
            if key not in schema:
                continue
            subs = schema[key]
            if not isinstance(subs, list) or not subs:
                raise SchemaError(f"`{key}` at {where} must be a non-empty list")
            nodes = [self.compile(s, f"{where}/{key}/{i}") for i, s in enumerate(subs)]
            out.append(_combinator(key, nodes))
        if "not" in schema:
            inner = self.compile(schema["not"], f"{where}/not")
            inner_ok = inner.ok

            def not_ok(v: Any) -> bool:
                return not inner_ok(v)

            out.append((not_ok, _simple_collect(not_ok, lambda v: "Value must not match the schema in `not`")))
        if "if" in schema:
            cond = self.compile(schema["if"], f"{where}/if")
            then = self.compile(schema.get("then", True), f"{where}/then")
            other = self.compile(schema.get("else", True), f"{where}/else")

            def if_ok(v: Any) -> bool:
                return then.ok(v) if cond.ok(v) else other.ok(v)

            def if_collect(v: Any, path: Path, errors: Problems) -> None:
                (then if cond.ok(v) else other).collect(v, path, errors)

            out.append((if_ok, if_collect))
        return out


def _escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _count(schema: dict, key: str, where: str) -> Optional[int]:
    if key not in schema:
        return None
    n = schema[key]
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise SchemaError(f"`{key}` at {where} must be a non-negative integer")
    return n


def _all_of_checks(checks: Sequence[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks

        def both(v: Any) -> bool:
            return a(v) and b(v)

        return both
    checks = tuple(checks)

    def every(v: Any) -> bool:
        for c in checks:
            if not c(v):
                return False
        return True

    return every


def _reasons_collect(reasons: Sequence[Tuple[Check, str]]) -> Collect:
    def collect(v: Any, path: Path, errors: Problems) -> None:
        for c, reason in reasons:
            if not c(v):
                errors.append((format_path(path), reason))

    return collect


def _simple_collect(check: Check, reason: Callable[[Any], str]) -> Collect:
    def collect(v: Any, path: Path, errors: Problems) -> None:
        if not check(v):
            errors.append((format_path(path), reason(v)))

    return collect


def _combinator(key: str, nodes: List[_Node]) -> Tuple[Check, Collect]:
    oks = tuple(n.ok for n in nodes)
    count = len(nodes)
    if key == "allOf":

        def ok(v: Any) -> bool:
            for c in oks:
                if not c(v):
                    return False
            return True

        def collect(v: Any, path: Path, errors: Problems) -> None:
            for n in nodes:
                if not n.ok(v):
                    n.collect(v, path, errors)

        return ok, collect
    if key == "anyOf":

        def ok(v: Any) -> bool:
            for c in oks:
                if c(v):
                    return True
            return False

        def collect(v: Any, path: Path, errors: Problems) -> None:
            if not ok(v):
                errors.append((format_path(path), f"Expected a value matching at least one of the {count} schemas in `anyOf`"))

        return ok, collect

    def ok(v: Any) -> bool:
        hits = 0
        for c in oks:
            if c(v):
                hits += 1
                if hits > 1:
                    return False
        return hits == 1

    def collect(v: Any, path: Path, errors: Problems) -> None:
        hits = sum(1 for c in oks if c(v))
        if hits == 0:
            errors.append((format_path(path), f"Expected a value matching exactly one of the {count} schemas in `oneOf`, it matches none"))
        elif hits > 1:
            errors.append((format_path(path), f"Expected a value matching exactly one of the {count} schemas in `oneOf`, it matches {hits}"))

    return ok, collect


def _assemble(
    type_names: Optional[List[str]],
    kinds: Dict[type, Tuple[Check, Collect]],
    generics: List[Tuple[Check, Collect]],
) -> _Node:
    kind_ok = {t: c for t, (c, _) in kinds.items()}
    kind_collect = {t: c for t, (_, c) in kinds.items()}
    generic_oks = tuple(c for c, _ in generics)
    generic_collects = tuple(c for _, c in generics)

    if type_names is None:
        tset = None
        int_from_float = False
        expected = ""
    else:
        tset = frozenset(t for n in type_names for t in _PY_TYPES[n])
        int_from_float = "integer" in type_names and "number" not in type_names
        expected = " | ".join(_EXPECTED_NAME[n] for n in type_names)

    def type_ok(v: Any) -> Optional[type]:
        # The slow path: subclasses, and floats standing for integers (JSON Schema: 1.0 is an integer).
        t = _base_type(v)
        if t is None:
            return None
        if t in tset:  # type: ignore[operator]
            return t
        if t is float and int_from_float and v.is_integer():
            return t
        return None

    def ok(v: Any) -> bool:
        t = type(v)
        if tset is not None and t not in tset:
            t = type_ok(v)
            if t is None:
                return False
        c = kind_ok.get(t)
        if c is None and t not in _EXACT:
            c = kind_ok.get(_base_type(v))
        if c is not None and not c(v):
            return False
        for g in generic_oks:
            if not g(v):
                return False
        return True

    # Specialised shapes: most subschemas are a bare type or a type plus one kind's constraints.
    if tset is not None and not generic_oks and not int_from_float:
        if not kind_ok:

            def ok(v: Any) -> bool:  # noqa: F811
                return type(v) in tset or type_ok(v) is not None

        elif len(kind_ok) == 1 and len(tset) == 1:
            (only_t, only_c), = kind_ok.items()

            def ok(v: Any) -> bool:  # noqa: F811
                if type(v) is only_t:
                    return only_c(v)
                return type_ok(v) is not None and only_c(v)

    def collect(v: Any, path: Path, errors: Problems) -> None:
        t = type(v)
        if tset is not None and t not in tset:
            t = type_ok(v)
            if t is None:
                errors.append((format_path(path), f"Expected `{expected}`, got `{_got(v)}`"))
                return
        if t not in _EXACT:
            t = _base_type(v)
        c = kind_collect.get(t)  # type: ignore[arg-type]
        if c is not None and not kind_ok[t](v):  # type: ignore[index]
            c(v, path, errors)
        for g_ok, g in zip(generic_oks, generic_collects):
            if not g_ok(v):
                g(v, path, errors)

    return _Node(ok, collect)


# -- the generated fast path ---------------------------------------------------------

class _MissingType:
    __slots__ = ()


_MISSING = _MissingType()
_TYPE_NAMES = {dict: "dict", list: "list", str: "str", int: "int", float: "float", bool: "bool", _NoneType: "NoneType"}
# Keywords whose subschema is checked through its closure rather than inlined.
_CLOSURE_ONLY = frozenset(
    ("patternProperties", "propertyNames", "dependentRequired", "prefixItems", "additionalItems", "uniqueItems")
)
_MAX_INLINE_DEPTH = 12


class _Generator:
    """Writes one Python function per schema: ``is_valid`` with the checks inlined.

    Function calls dominate a closure tree (one per value); the generated code
    tests exact builtin types and bounds in place and calls a closure only for
    rare shapes (subclasses, floats standing for integers, combinators).
    """

    def __init__(self, compiler: _Compiler) -> None:
        self.compiler = compiler
        self.namespace: Dict[str, Any] = {"_M": _MISSING, "_key": json_equal_key, "NoneType": _NoneType}
        self.counter = 0

    def bind(self, obj: Any, prefix: str) -> str:
        self.counter += 1
        name = f"_{prefix}{self.counter}"
        self.namespace[name] = obj
        return name

    def fresh(self) -> str:
        self.counter += 1
        return f"v{self.counter}"

    def function(self, schema: Any, where: str) -> Check:
        lines = ["def is_valid(v0):"]
        self.emit(schema, where, "v0", 0, lines, "    ")
        lines.append("    return True")
        exec(compile("\n".join(lines), f"<ajpcore schema {where}>", "exec"), self.namespace)
        return self.namespace.pop("is_valid")

    def emit(
        self, schema: Any, where: str, var: str, depth: int, lines: List[str], ind: str, missing: bool = False
    ) -> None:
        """Append statements that ``return False`` unless ``var`` is valid (``missing``: it may be ``_M``)."""
        if schema is True or (isinstance(schema, dict) and not any(k in _KEYWORDS for k in schema)):
            return
        node = self.compiler.compile(schema, where)
        if (
            schema is False
            or depth > _MAX_INLINE_DEPTH
            or any(k in schema for k in _CLOSURE_ONLY)
            or isinstance(schema.get("items"), list)
        ):
            skip = f"{var} is not _M and " if missing else ""
            lines.append(f"{ind}if {skip}not {self.bind(node.ok, 'node')}({var}): return False")
            return
        slow = self.bind(node.ok, "node")
        names = schema.get("type")
        if isinstance(names, str):
            names = [names]
        kinds = [
            ("object", (dict,), self.object_lines),
            ("array", (list,), self.array_lines),
            ("string", (str,), self.string_lines),
            ("number", (int, float), self.number_lines),
            ("integer", (int,), self.number_lines),
            ("boolean", (bool,), None),
            ("null", (_NoneType,), None),
        ]
        branches: List[Tuple[Tuple[type, ...], List[str]]] = []
        trivial = set()  # exact types accepted with nothing more to check
        for name, types, make in kinds:
            if name == "integer" and (names is None or "number" in names):
                continue
            if names is not None and name not in names:
                continue
            body: List[str] = []
            if make is not None:
                make(schema, where, var, depth, body, ind + "    ")
            self.generic_lines(schema, where, var, depth, body, ind + "    ", name)
            if body:
                branches.append((types, body))
            else:
                trivial.update(types)
        if missing:
            trivial.add(_MissingType)
        if len(branches) == 1:
            t = f"type({var})"
        else:
            t = f"t_{var}"
            if branches:
                lines.append(f"{ind}{t} = type({var})")
        keyword = "if"
        for types, body in branches:
            cond = " or ".join(f"{t} is {_TYPE_NAMES[x]}" for x in types)
            lines.append(f"{ind}{keyword} {cond}:")
            lines.extend(body)
            keyword = "elif"
        rest = f"type({var}) not in {self.bind(frozenset(trivial), 'types')} and " if trivial else ""
        lines.append(f"{ind}{keyword} {rest}not {slow}({var}): return False")

    def object_lines(self, schema: dict, where: str, var: str, depth: int, lines: List[str], ind: str) -> None:
        required = schema.get("required", [])
        if len(required) == 1:
            lines.append(f"{ind}if {required[0]!r} not in {var}: return False")
        elif required:
            lines.append(f"{ind}if not {var}.keys() >= {self.bind(frozenset(required), 'required')}: return False")
        lo, hi = schema.get("minProperties"), schema.get("maxProperties")
        if lo is not None:
            lines.append(f"{ind}if len({var}) < {int(lo)}: return False")
        if hi is not None:
            lines.append(f"{ind}if len({var}) > {int(hi)}: return False")
        props = schema.get("properties", {})
        known = self.bind(frozenset(props), "known")
        addl = schema.get("additionalProperties", True)
        if addl is False:
            lines.append(f"{ind}if not {known}.issuperset({var}): return False")
        present = frozenset(required)  # checked above: read those by subscript
        for key, sub in props.items():
            body: List[str] = []
            x = self.fresh()
            may_miss = key not in present
            self.emit(sub, f"{where}/properties/{_escape_pointer(key)}", x, depth + 1, body, ind, missing=may_miss)
            if body:
                lines.append(f"{ind}{x} = {var}.get({key!r}, _M)" if may_miss else f"{ind}{x} = {var}[{key!r}]")
                lines.extend(body)
        if addl is not True and addl is not False:
            body = []
            x = self.fresh()
            self.emit(addl, f"{where}/additionalProperties", x, depth + 1, body, ind + "        ")
            if body:
                k = self.fresh()
                lines.append(f"{ind}for {k}, {x} in {var}.items():")
                lines.append(f"{ind}    if {k} not in {known}:")
                lines.extend(body)

    def array_lines(self, schema: dict, where: str, var: str, depth: int, lines: List[str], ind: str) -> None:
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        if lo is not None:
            lines.append(f"{ind}if len({var}) < {int(lo)}: return False")
        if hi is not None:
            lines.append(f"{ind}if len({var}) > {int(hi)}: return False")
        if "items" in schema:
            body: List[str] = []
            x = self.fresh()
            self.emit(schema["items"], f"{where}/items", x, depth + 1, body, ind + "    ")
            if body:
                lines.append(f"{ind}for {x} in {var}:")
                lines.extend(body)

    def string_lines(self, schema: dict, where: str, var: str, depth: int, lines: List[str], ind: str) -> None:
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if lo is not None:
            lines.append(f"{ind}if len({var}) < {int(lo)}: return False")
        if hi is not None:
            lines.append(f"{ind}if len({var}) > {int(hi)}: return False")
        if "pattern" in schema:
            search = self.bind(ecma_regex(schema["pattern"]).search, "search")
            lines.append(f"{ind}if {search}({var}) is None: return False")
        if "format" in schema:
            fmt = self.compiler.formats[schema["format"]]
            if fmt is not None:
                lines.append(f"{ind}if not {self.bind(fmt[0], 'format')}({var}): return False")

    def number_lines(self, schema: dict, where: str, var: str, depth: int, lines: List[str], ind: str) -> None:
        for key, op in (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
            if key in schema:
                lines.append(f"{ind}if not {var} {op} {self.bind(schema[key], 'bound')}: return False")

    def generic_lines(
        self, schema: dict, where: str, var: str, depth: int, lines: List[str], ind: str, kind: Optional[str]
    ) -> None:
        if "enum" in schema:
            values = schema["enum"]
            if kind == "string" and all(type(x) is str for x in values):
                lines.append(f"{ind}if {var} not in {self.bind(frozenset(values), 'enum')}: return False")
            else:
                keys = self.bind(frozenset(json_equal_key(x) for x in values), "enum")
                lines.append(f"{ind}if _key({var}) not in {keys}: return False")
        if "const" in schema:
            lines.append(f"{ind}if _key({var}) != {self.bind(json_equal_key(schema['const']), 'const')}: return False")
        if "$ref" in schema:
            ref = self.compiler.ref(schema["$ref"], where)
            lines.append(f"{ind}if not {self.bind(ref.ok, 'ref')}({var}): return False")
        for i, sub in enumerate(schema.get("allOf", ())):
            self.emit(sub, f"{where}/allOf/{i}", var, depth + 1, lines, ind)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                nodes = [self.sub(s, f"{where}/{key}/{i}") for i, s in enumerate(schema[key])]
                lines.append(f"{ind}if not {self.bind(_combinator(key, nodes)[0], key)}({var}): return False")
        if "not" in schema:
            inner = self.sub(schema["not"], f"{where}/not")
            lines.append(f"{ind}if {self.bind(inner.ok, 'not')}({var}): return False")
        if "if" in schema:
            cond = self.sub(schema["if"], f"{where}/if")
            then = self.sub(schema.get("then", True), f"{where}/then")
            other = self.sub(schema.get("else", True), f"{where}/else")
            c, a, b = self.bind(cond.ok, "if"), self.bind(then.ok, "then"), self.bind(other.ok, "else")
            lines.append(f"{ind}if not ({a}({var}) if {c}({var}) else {b}({var})): return False")

    def sub(self, schema: Any, where: str) -> _Node:
        """A subschema as its own generated function (for combinators and conditions)."""
        return _Node(self.function(schema, where), self.compiler.compile(schema, where).collect)


class CompiledSchema:
    """A compiled JSON Schema: ``is_valid(value)``, ``errors(value)``, ``validate(value)``.

    Values are JSON values as ``ajpcore.decode`` returns them (dict, list, str,
    int, float, bool, None); subclasses of those are read as their base type.
    """

    __slots__ = ("schema", "is_valid", "_collect")

    def __init__(self, schema: Any, node: _Node) -> None:
        self.schema = schema
        self.is_valid: Check = node.ok
        self._collect = node.collect

    def errors(self, value: Any) -> List[Tuple[str, str]]:
        """Every problem as ``(json_path, reason)``, in document order; ``[]`` when valid."""
        if self.is_valid(value):
            return []
        problems: Problems = []
        self._collect(value, (), problems)
        if not problems:  # defensive: the two closures must agree
            problems.append(("$", "Value does not match the schema"))
        return problems

    def validate(self, value: Any) -> None:
        """Return ``None`` when ``value`` is valid, else raise ``ValidationError`` listing every problem."""
        if not self.is_valid(value):
            raise ValidationError(self.errors(value))


def compile_schema(
    schema: Any,
    *,
    formats: Optional[Mapping[str, Optional[Callable[[str], bool]]]] = None,
    generate: bool = True,
) -> CompiledSchema:
    """Compile a JSON Schema document (Draft 2020-12 or Draft-07) into a ``CompiledSchema``.

    ``formats`` adds format checkers (``name -> callable(str) -> bool``) or makes a
    format annotation-only (``name -> None``).  Raises ``SchemaError`` for anything
    the compiler cannot enforce exactly (see the module docstring).

    ``is_valid`` is generated Python source for the common case (exact builtin
    types, the usual keywords) that defers every other value to the closures;
    ``generate=False`` uses the closures alone (the two must agree: tested).
    """
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"a schema is an object or a boolean, got `{_got(schema)}`")
    compiler = _Compiler(schema if isinstance(schema, dict) else {}, formats or {})
    node = compiler.compile(schema)
    if generate:
        node = _Node(_Generator(compiler).function(schema, "#"), node.collect)
    return CompiledSchema(schema, node)
