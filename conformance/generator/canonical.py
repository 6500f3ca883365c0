"""canonical.json: JSON text in, RFC 8785 text (or the kind of refusal) out.

Expected texts come from, in order of preference: the cyberphone RFC 8785 vectors
(``tests/vectors/jcs/output``), the ES6 number vectors (node's
``Number.prototype.toString`` for 100,000 doubles), and the generator's own
reference writer (``reference.py``, cross-checked with the ``rfc8785`` package).
"""

from __future__ import annotations

import json
import random
from typing import Any, Dict, List, Optional

from . import reference as ref

SEED = 8785

LONE_SURROGATE_LAX = (
    "JSON.parse keeps a lone surrogate escape; a canonicalizer without a well-formedness check"
    " (provenance-protocol 0.3.0's) writes it back"
)
UNSAFE_INT_LAX = "JSON.parse rounds the literal to the nearest double and canonicalizers write that double"
DUPLICATE_LAX = "JSON.parse keeps the last duplicate member"
DEPTH_LAX = "JSON.parse and an iterative canonicalizer (npm canonicalize 5) have no nesting limit"


class _Cases:
    def __init__(self) -> None:
        self.cases: List[Dict[str, Any]] = []

    def ok(self, id: str, why: str, text: str, canonical: Optional[str] = None) -> None:
        expected = ref.canonical_of_text(text)
        if canonical is not None and canonical != expected:
            raise AssertionError(f"{id}: vector says {canonical!r}, reference writer {expected!r}")
        self.cases.append({"id": id, "why": why, "input": text, "canonical": expected})

    def refuse(self, id: str, why: str, text: str, kind: str, js_lax: Optional[str] = None) -> None:
        case: Dict[str, Any] = {"id": id, "why": why, "input": text, "error": kind}
        if js_lax:
            case["js_lax"] = js_lax
        self.cases.append(case)


def _cyberphone(c: _Cases) -> None:
    for name in ["arrays", "french", "structures", "unicode", "values", "weird"]:
        text = (ref.VECTORS / "jcs" / "input" / f"{name}.json").read_text("utf-8")
        out = (ref.VECTORS / "jcs" / "output" / f"{name}.json").read_text("utf-8")
        c.ok(f"cyberphone-{name}", f"RFC 8785 reference vector `{name}` (cyberphone testdata)", text, out)


_NUMBER_CLASSES = [
    ("int-small", "an integer below 2^53 is written with all its digits"),
    ("int-large", "an integer-valued double from 2^53 up to 1e21 is written with ES shortest digits and zeros"),
    ("exp-plus", "a double of 1e21 or more takes the `e+` exponent form"),
    ("fraction", "a double from 1e-6 up to 1e21 with a fraction is written in plain decimal"),
    ("small", "a double below 1e-6 takes the `e-` exponent form"),
    ("subnormal", "a subnormal double: shortest digits of a value with reduced precision"),
]


def _number_class(bits: str, text: str) -> str:
    body = text.lstrip("-")
    if int(bits, 16) & 0x7FF0000000000000 == 0:
        return "subnormal"
    if "e+" in body:
        return "exp-plus"
    if "e-" in body:
        return "small"
    if "." in body:
        return "fraction"
    return "int-small" if int(body) <= ref.MAX_SAFE_INTEGER else "int-large"


def _es6_numbers(c: _Cases) -> None:
    rng = random.Random(SEED)
    statics = {}
    by_class: Dict[str, List[Any]] = {k: [] for k, _ in _NUMBER_CLASSES}
    for line, bits, text in ref.es6_vectors():
        if line <= 168:
            statics[line] = (bits, text)
        elif line > 2168:  # after the 2,000 serial values
            by_class[_number_class(bits, text)].append((line, bits, text))
    # The static table is the sequence's list of hand-picked edge doubles.
    for line in sorted(statics):
        bits, text = statics[line]
        x = ref.double(bits)
        if line % 4 and line > 8:  # a quarter of the edge list, plus the first eight (zeros, tiny)
            continue
        literal = repr(x)
        c.ok(f"es6-static-{line:03d}", f"ES6 edge double {bits}: node writes `{text}`", literal, text)
    serial = [(i, b, t) for i, b, t in ref.es6_vectors() if 169 <= i <= 2168]
    for line, bits, text in rng.sample(serial, 6):
        c.ok(f"es6-serial-{line:04d}", f"smallest normal doubles (0x0010000000000000 + i): `{text}`", f"{ref.double(bits)!r}", text)
    for name, why in _NUMBER_CLASSES:
        pool = by_class[name]
        for line, bits, text in rng.sample(pool, min(8, len(pool))):
            x = ref.double(bits)
            # Alternate spellings: shortest repr, 17 significant digits, upper-case exponent.
            style = line % 3
            literal = repr(x) if style == 0 else ("%.16e" % x if style == 1 else repr(x).upper())
            c.ok(f"es6-{name}-{line:06d}", f"{why} (ES6 vector line {line})", literal, text)


def _boundary_numbers(c: _Cases) -> None:
    ok = [
        ("max-safe", "9007199254740991", "2^53-1, the largest safe integer, is written as is"),
        ("min-safe", "-9007199254740991", "-(2^53-1) is written as is"),
        ("two-53", "9007199254740992", "2^53 is its own double: admitted and written as is"),
        ("two-53-plus-2", "9007199254740994", "2^53+2 is a double (spacing 2 above 2^53): admitted"),
        ("two-64", "18446744073709551616", "2^64 is exactly a double; ES writes it `18446744073709552000`"),
        ("two-64-es", "18446744073709552000", "ECMAScript's own spelling of 2^64 is admitted and kept"),
        ("es-spelling", "123456789012345680000", "the digits ES writes for a double are admitted and kept"),
        ("1e20", "1e20", "1e20 is below 1e21: plain digits `100000000000000000000`"),
        ("1e21", "1e21", "1e21 is where ES switches to the exponent form: `1e+21`"),
        ("below-1e21", "999999999999999900000", "the largest double below 1e21 keeps plain digits"),
        ("1e21-minus-ulp", "9.999999999999999e20", "the same double written with an exponent"),
        ("1e-6", "0.000001", "1e-6 is the smallest power of ten in plain decimal"),
        ("1e-7", "0.0000001", "1e-7 switches to the exponent form `1e-7`"),
        ("1e-7-exp", "1E-7", "upper-case exponent is read, `e-` is written"),
        ("min-subnormal", "5e-324", "the smallest subnormal double"),
        ("min-subnormal-long", "4.9406564584124654e-324", "the smallest subnormal written with 17 digits"),
        ("max-subnormal", "2.225073858507201e-308", "the largest subnormal double"),
        ("min-normal", "2.2250738585072014e-308", "the smallest normal double"),
        ("max-double", "1.7976931348623157e308", "the largest finite double: `1.7976931348623157e+308`"),
        ("minus-zero-int", "-0", "-0 is written `0`"),
        ("minus-zero-float", "-0.0", "negative zero is written `0`"),
        ("zero-exp", "0e10", "zero with an exponent is `0`"),
        ("one-point-zero", "1.0", "an integral double loses its fraction: `1`"),
        ("one-e-two", "1E2", "exponent notation of an integer: `100`"),
        ("fraction-exp", "100e-2", "100e-2 is 1"),
        ("point-one", "0.1", "0.1 stays `0.1` (shortest round trip, not the exact binary value)"),
        ("point-three", "0.30000000000000004", "0.1+0.2 needs all 17 digits"),
        ("three-ulp", "3.0000000000000004", "one ulp above 3"),
        ("one-third", "0.3333333333333333", "1/3 with 16 digits"),
        ("neg-exp", "-1.5e-9", "a negative number in the exponent form"),
        ("shift", "123e-20", "123e-20 normalises to `1.23e-18`"),
        ("long-mantissa", "0.1000000000000000055511151231257827021181583404541015625", "the exact binary value of 0.1 reads as 0.1"),
        ("tie-even", "1.00000000000000011102230246251565404236316680908203125", "a decimal exactly halfway between two doubles rounds to even: `1`"),
        ("tie-above", "1.00000000000000011102230246251565404236316680908203126", "just above the halfway point rounds up"),
        ("underflow", "1e-400", "a literal below half the smallest subnormal rounds to 0"),
        ("fraction-of-unsafe", "9007199254740993.0", "a literal with a fraction is read as the nearest double (only integer literals must be exact)"),
        ("big-exp-int", "1e300", "a huge integral double takes the exponent form"),
        ("many-digits", "12345678901234567890e-10", "a long integer mantissa with an exponent"),
        ("negative-int", "-42", "a negative integer"),
        ("ten-21-digits", "100000000000000000000", "10^20 as an integer literal is a double and keeps its digits"),
        ("ten-21-int", "1000000000000000000000", "10^21 as an integer literal is a double and is written `1e+21`"),
    ]
    for name, text, why in ok:
        c.ok(f"number-{name}", why, text)
    c.refuse("number-overflow-in-array", "one overflowing number refuses the whole document",
             "[1.0,-0,1e21,1e-7,0.000001,5e-324,1E400]", "number_range")
    refusals = [
        ("unsafe-int-plus-1", "9007199254740993", "unsafe_integer", "2^53+1 is no double: a JavaScript peer would read 2^53", UNSAFE_INT_LAX),
        ("unsafe-int-neg", "-9007199254740993", "unsafe_integer", "-(2^53+1) is no double", UNSAFE_INT_LAX),
        ("unsafe-two-64-plus-1", "18446744073709551617", "unsafe_integer", "2^64+1 would silently become 2^64", UNSAFE_INT_LAX),
        ("unsafe-20-digits", "12345678901234567890", "unsafe_integer", "neither a double's value nor its ES spelling", UNSAFE_INT_LAX),
        ("unsafe-21-digits", "123456789012345678901", "unsafe_integer", "21 digits that no double has", UNSAFE_INT_LAX),
        ("unsafe-in-object", '{"id":9007199254740993}', "unsafe_integer", "an unsafe integer inside an object", UNSAFE_INT_LAX),
        ("overflow", "1e400", "number_range", "beyond the largest double", None),
        ("overflow-neg", "-1e400", "number_range", "below the most negative double", None),
        ("overflow-just", "1.8e308", "number_range", "just beyond the largest double", None),
        ("overflow-int", "1" + "0" * 309, "number_range", "an integer literal of 310 digits", None),
        ("nan", "NaN", "syntax", "NaN is not JSON", None),
        ("nan-in-array", "[NaN]", "syntax", "NaN is not JSON, even inside an array", None),
        ("infinity", "Infinity", "syntax", "Infinity is not JSON", None),
        ("minus-infinity", "[-Infinity]", "syntax", "-Infinity is not JSON", None),
        ("leading-zero", "[01]", "syntax", "leading zeros are not JSON", None),
        ("leading-plus", "[+1]", "syntax", "a leading plus sign is not JSON", None),
        ("bare-point", "[.5]", "syntax", "a fraction needs a leading digit", None),
        ("trailing-point", "[1.]", "syntax", "a fraction needs a digit after the point", None),
        ("hex", "[0x10]", "syntax", "hexadecimal is not JSON", None),
    ]
    for name, text, kind, why, lax in refusals:
        c.refuse(f"number-{name}", why, text, kind, lax)


def _strings(c: _Cases) -> None:
    ok = [
        ("short-escapes", r'"\b\f\n\r\t"', "the five control characters with short escapes keep them"),
        ("nul", r'"\u0000"', "U+0000 is written `\\u0000`"),
        ("bell", r'"\u0007"', "other controls are `\\u00xx` with lowercase hex"),
        ("vtab", r'"\u000b"', "vertical tab has no short escape in JSON: `\\u000b`"),
        ("unit-sep", r'"\u001F"', "U+001F, read from upper-case hex, written lowercase"),
        ("space", r'"\u0020"', "U+0020 is not escaped"),
        ("quote-backslash", r'"\"\\"', "quote and backslash keep their short escapes"),
        ("solidus", r'"\/"', "an escaped solidus is written raw `/`"),
        ("del", r'"\u007f"', "U+007F (DEL) is written raw"),
        ("c1", r'"\u0080\u009f"', "C1 controls are written raw"),
        ("latin1", r'"\u00e9"', "an escaped é is written as raw UTF-8"),
        ("escaped-ascii", r'"\u0041\u0062"', "escaped ASCII letters are written raw"),
        ("line-sep", r'"\u2028\u2029"', "U+2028/U+2029 are written raw (ES2019 JSON.stringify)"),
        ("replacement", r'"\ufffd"', "U+FFFD is an ordinary character"),
        ("bom-in-string", r'"\ufeff"', "U+FEFF inside a string is an ordinary character"),
        ("pair", r'"\ud83d\ude00"', "a surrogate pair escape is one character, written as 4 UTF-8 bytes"),
        ("pair-upper", r'"\uD834\uDD1E"', "upper-case surrogate pair escape (U+1D11E)"),
        ("raw-astral", '"\U0001f680"', "a raw astral character stays raw"),
        ("max-scalar-pair", r'"\udbff\udffd"', "U+10FFFD, the last assigned-range plane-16 character"),
        ("mixed", '"a\\tb\u00e9\\u00e9\U0001f600\\\\"', "a mix of raw, short-escaped and \\u-escaped characters"),
        ("empty", '""', "the empty string"),
        ("combining", '"e\\u0301"', "no Unicode normalization: e + U+0301 stays two characters"),
        ("cjk", '"\u4e2d\u6587"', "CJK characters are raw UTF-8"),
    ]
    for name, text, why in ok:
        c.ok(f"string-{name}", why, text)
    lone = [
        ("high", r'"\ud800"', "a lone high surrogate escape is not a Unicode scalar value"),
        ("low", r'"\udc00"', "a lone low surrogate escape"),
        ("last-low", r'"x\udfff"', "U+DFFF alone after text"),
        ("reversed", r'"\udc00\ud800"', "a low then a high surrogate is not a pair"),
        ("high-high", r'"\ud800\ud800"', "two high surrogates are not a pair"),
        ("high-then-ascii", r'"\ud800\u0041"', "a high surrogate followed by an escaped letter"),
        ("high-at-end", r'"ab\udbff"', "a high surrogate at the end of the string"),
        ("in-key", r'{"\ud800":1}', "a lone surrogate in a member name"),
        ("in-nested", r'[{"a":["\udfff"]}]', "a lone surrogate deep inside"),
    ]
    for name, text, why in lone:
        c.refuse(f"surrogate-{name}", why, text, "lone_surrogate", LONE_SURROGATE_LAX)
    bad = [
        ("raw-control", '"a\u0001b"', "a raw control character inside a string is not JSON"),
        ("raw-tab", '"a\tb"', "a raw tab inside a string is not JSON"),
        ("bad-escape", r'"\x41"', "`\\x` is not a JSON escape"),
        ("short-u", r'"\u12"', "`\\u` needs four hex digits"),
        ("single-quotes", "'a'", "single quotes are not JSON"),
        ("unterminated", '"abc', "an unterminated string"),
    ]
    for name, text, why in bad:
        c.refuse(f"string-{name}", why, text, "syntax")


def _key_order(c: _Cases) -> None:
    ok = [
        ("utf16-vs-codepoint", '{"\\ufb33":1,"\\ud83d\\ude00":2}', "UTF-16 order: U+1F600 (D83D DE00) sorts before U+FB33, unlike code point order"),
        ("utf16-e000", '{"\\ue000":1,"\U0001f600":2}', "U+E000 sorts after a surrogate pair in UTF-16 units"),
        ("utf16-ffff-pair", '{"\\uff61":1,"\\ud800\\udc00":2}', "U+10000 (D800 DC00) sorts before U+FF61"),
        ("ascii", '{"b":1,"a":2,"c":3}', "ASCII member names in code unit order"),
        ("case", '{"a":1,"B":2,"A":3,"b":4}', "upper-case letters sort before lower-case"),
        ("digits-first", '{"a":1,"1":2,"_":3,"Z":4}', "digits, upper case, underscore, lower case"),
        ("numeric-keys", '{"10":1,"9":2,"1":3,"2":4}', "integer-like names sort as strings, not numbers"),
        ("prefix", '{"ab":1,"a":2,"aa":3,"":4}', "a prefix sorts first; the empty name first of all"),
        ("latin1", '{"\\u00e9":1,"z":2,"e":3}', "é (U+00E9) sorts after z"),
        ("del-c1", '{"\\u0080":1,"\\u007f":2,"~":3}', "~, DEL, U+0080 in that order"),
        ("controls", '{"\\n":1,"\\u0000":2," ":3}', "U+0000 first; the order is on unescaped names"),
        ("escaped-names", '{"\\u0062":1,"a":2}', "names are compared after unescaping"),
        ("nested", '{"b":{"z":1,"y":{"d":1,"c":2}},"a":[{"q":1,"p":2}]}', "objects are sorted at every depth, arrays keep their order"),
        ("proto", '{"__proto__":1,"a":2}', "`__proto__` is an ordinary member name"),
        ("combining-names", '{"\\u00e9":1,"e\\u0301":2}', "precomposed and decomposed é are two different names"),
        ("astral-pair-order", '{"\\ud83d\\ude01":1,"\\ud83d\\ude00":2,"\\ud83c\\udf00":3}', "astral names order by their surrogate units"),
        ("hebrew-astral", '{"\\u05d0":1,"\\ud801\\udc00":2,"\\u0410":3}', "Cyrillic, Hebrew, then a plane-1 name"),
    ]
    for name, text, why in ok:
        c.ok(f"keys-{name}", why, text)
    dup = [
        ("plain", '{"a":1,"a":2}', "a repeated member name"),
        ("escaped", '{"a":1,"\\u0061":2}', "names equal after unescaping"),
        ("solidus", '{"a/":1,"a\\/":2}', "`\\/` unescapes to `/`"),
        ("pair", '{"\U0001f600":1,"\\ud83d\\ude00":2}', "a raw and an escaped astral character are the same name"),
        ("nested", '{"x":{"k":1,"k":1}}', "duplicates inside a nested object, even with equal values"),
    ]
    for name, text, why in dup:
        c.refuse(f"duplicate-{name}", why, text, "duplicate_name", DUPLICATE_LAX)


def _structure(c: _Cases) -> None:
    ok = [
        ("empty-object", "{}", "the empty object"),
        ("empty-array", "[]", "the empty array"),
        ("empty-nested", '[{},[],{"a":{}},[[]]]', "empty containers inside containers"),
        ("whitespace", ' \t\r\n{ "a" :\n[ 1 ,\t2 ] } \n', "insignificant whitespace of all four kinds is dropped"),
        ("true", "true", "a top-level literal"),
        ("null", "null", "a top-level null"),
        ("string", '"x"', "a top-level string"),
        ("array-order", "[3,1,2]", "arrays keep their order"),
        ("literals", '{"t":true,"f":false,"n":null}', "the three literals"),
        ("mixed", '[1,"a",null,true,{"k":[false]}]', "all types together"),
    ]
    for name, text, why in ok:
        c.ok(f"structure-{name}", why, text)
    for depth in (32, 128):
        c.ok(f"depth-array-{depth}", f"{depth} nested arrays are fine", "[" * depth + "]" * depth)
        c.ok(f"depth-object-{depth}", f"{depth} nested objects are fine", '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1))
    c.ok("depth-mixed-100", "100 alternately nested objects and arrays", '{"a":[' * 50 + "0" + "]}" * 50)
    deep = 20_000  # above every common parser's limit (Go's is 10,000)
    c.refuse("depth-array-20000", "20,000 nested arrays: refused with an error, never a crash", "[" * deep + "]" * deep, "depth", DEPTH_LAX)
    c.refuse("depth-object-20000", "20,000 nested objects: refused with an error", '{"":' * deep + "1" + "}" * deep, "depth", DEPTH_LAX)
    syntax = [
        ("trailing-comma", "[1,]", "a trailing comma"),
        ("trailing-comma-object", '{"a":1,}', "a trailing comma in an object"),
        ("comment", "[1 /* x */]", "comments are not JSON"),
        ("unquoted-key", "{a:1}", "unquoted member names are not JSON"),
        ("trailing-data", "[] []", "two documents"),
        ("empty", "", "no document at all"),
        ("only-space", "  ", "whitespace only"),
        ("bom", "\ufeff{}", "a byte order mark before the document"),
        ("nbsp", "[1,\u00a02]", "U+00A0 is not JSON whitespace"),
        ("missing-colon", '{"a" 1}', "a member without a colon"),
        ("unclosed", '{"a":[1,2}', "mismatched brackets"),
    ]
    for name, text, why in syntax:
        c.refuse(f"syntax-{name}", why, text, "bom" if name == "bom" else "syntax")


def _random_documents(c: _Cases) -> None:
    rng = random.Random(SEED + 1)
    alphabet = ["a", "b", "z", "A", "_", "0", "\u00e9", "\u20ac", "\ufb33", "\U0001f600", "\ue000", "\n", '"', "\\", "\u0001", " "]
    numbers = [0, -1, 7, 2**53 - 1, 1.5, -0.0, 1e21, 1e-7, 0.1, 5e-324, 1.7976931348623157e308, 123456.789, 2.0**70]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))

    def value(depth: int) -> Any:
        r = rng.random()
        if depth > 4 or r < 0.35:
            return rng.choice([None, True, False, rng.choice(numbers), rng.uniform(-1e6, 1e6), text(), rng.randint(-10**6, 10**6)])
        if r < 0.65:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {text(): value(depth + 1) for _ in range(rng.randint(0, 5))}

    for i in range(30):
        doc = {text(): value(0) for _ in range(rng.randint(1, 6))}
        shown = json.dumps(doc, ensure_ascii=bool(i % 2), indent=None if i % 3 else 1)
        c.ok(f"random-{i:02d}", f"a seeded random document (seed {SEED + 1}, #{i}) written non-canonically", shown)


def build() -> List[Dict[str, Any]]:
    c = _Cases()
    _cyberphone(c)
    _es6_numbers(c)
    _boundary_numbers(c)
    _strings(c)
    _key_order(c)
    _structure(c)
    _random_documents(c)
    return c.cases
