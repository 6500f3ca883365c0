"""decode.json: bytes an I-JSON (RFC 7493) receiver must accept or refuse.

Every expectation here is stated from RFC 8259 and RFC 7493 (and the canonical int
rule the README explains), not read off a decoder.  The one policy that depends on
the code base's state is the noncharacter rule (issue 8): its cases are written
when ajpcore's decoder refuses noncharacters (``noncharacters_refused``), and the freshness
test keeps that switch honest (the committed pack must equal this output).
"""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Optional

from . import reference as ref



def noncharacters_refused() -> bool:
    """Whether ajpcore's decoder refuses Unicode noncharacters (issue 8): a policy switch only.

    The expected verdicts are stated below; this decides whether the pack holds those
    cases at all ("noncharacters if refused").  Should the decoder stop refusing them,
    the regenerated pack would lose the cases and the freshness test would fail.
    """
    import ajpcore

    try:
        ajpcore.decode(b'"\xef\xb7\x90"')
    except ajpcore.DecodeError:
        return True
    return False


class _Cases:
    def __init__(self) -> None:
        self.cases: List[Dict[str, Any]] = []

    def _add(self, id: str, why: str, data: bytes, expect: str, reason: Optional[str]) -> None:
        case: Dict[str, Any] = {"id": id, "why": why, "input_b64": base64.b64encode(data).decode("ascii"), "expect": expect}
        if reason:
            case["reason"] = reason
        self.cases.append(case)

    def accept(self, id: str, why: str, data: bytes) -> None:
        ref.parse(data.decode("utf-8"))  # the reference reading must agree that this is fine
        self._add(id, why, data, "accept", None)

    def refuse(self, id: str, why: str, data: bytes, reason: str) -> None:
        self._add(id, why, data, "refuse", reason)


def _accepts(c: _Cases) -> None:
    ok = [
        ("every-type", b'{"a":[1,-2.5e-3,true,false,null,"x"],"b":{},"c":[]}', "every JSON type once"),
        ("whitespace", b' \t\r\n[ 1 ,\n2 ]\r\n ', "all four whitespace characters around tokens"),
        ("scalar-number", b"42", "a top-level number"),
        ("scalar-string", b'"text"', "a top-level string"),
        ("scalar-null", b"null", "a top-level null"),
        ("empty-key", b'{"":0}', "the empty member name"),
        ("case-distinct", b'{"a":1,"A":2}', "names differing in case are different names"),
        ("space-distinct", b'{"a":1,"a ":2}', "a trailing space makes another name"),
        ("normalization-distinct", b'{"\xc3\xa9":1,"e\xcc\x81":2}', "precomposed and decomposed e-acute are different names"),
        ("same-name-other-objects", b'[{"a":1},{"a":2}]', "the same name in two objects is no duplicate"),
        ("nested-same-name", b'{"a":{"a":{"a":1}}}', "the same name at several depths is no duplicate"),
        ("escaped-nul", b'"\\u0000"', "an escaped NUL is a valid character"),
        ("all-short-escapes", b'"\\"\\\\\\/\\b\\f\\n\\r\\t"', "every short escape"),
        ("surrogate-pair-escape", b'"\\ud83d\\ude00"', "a surrogate pair escape is one character"),
        ("raw-astral", b'"\xf0\x9f\x98\x80"', "a raw 4-byte UTF-8 character"),
        ("bom-in-string", b'"\xef\xbb\xbf"', "U+FEFF inside a string is an ordinary character"),
        ("int-2-53", b"9007199254740992", "2^53 is its own double"),
        ("int-minus-2-53", b"-9007199254740992", "-2^53 is its own double"),
        ("int-2-64", b"18446744073709551616", "2^64 is exactly a double"),
        ("int-es-spelling", b"123456789012345680000", "ECMAScript's spelling of a double"),
        ("int-1e20", b"100000000000000000000", "10^20 is exactly a double"),
        ("minus-zero", b"-0", "-0 is a number"),
        ("minus-zero-float", b"-0.0", "-0.0 is a number"),
        ("exp-forms", b"[1e2,1E2,1e+2,1e-2,1.5E-2]", "every exponent spelling"),
        ("underflow", b"1e-400", "underflow rounds to zero; no binary64 overflow"),
        ("long-mantissa", b"0." + b"0" * 300 + b"1e300", "a long mantissa whose value fits"),
        ("many-digits", b"3.14159265358979323846264338327950288419716939937510", "more digits than a double holds: rounded"),
        ("fraction-of-unsafe", b"9007199254740993.5", "a literal with a fraction is read as the nearest double"),
        ("max-double", b"1.7976931348623157e308", "the largest finite double"),
        ("min-subnormal", b"5e-324", "the smallest subnormal"),
        ("depth-128", b"[" * 128 + b"]" * 128, "128 nested arrays: every receiver must take at least this"),
        ("depth-128-objects", b'{"a":' * 127 + b"{}" + b"}" * 127, "128 nested objects"),
        ("long-string", b'"' + b"x" * 20_000 + b'"', "a 20,000-character string"),
        ("wide-array", b"[" + b",".join([b"0"] * 10_000) + b"]", "an array of 10,000 elements"),
    ]
    for name, data, why in ok:
        c.accept(f"accept-{name}", why, data)
    edges = [
        ("u007f", "\x7f", "the last 1-byte UTF-8 character"),
        ("u0080", "\x80", "the first 2-byte UTF-8 character"),
        ("u07ff", "\u07ff", "the last 2-byte UTF-8 character"),
        ("u0800", "\u0800", "the first 3-byte UTF-8 character"),
        ("ud7ff", "\ud7ff", "the last character before the surrogate range"),
        ("ue000", "\ue000", "the first character after the surrogate range"),
        ("ufdcf", "\ufdcf", "just before the noncharacter block U+FDD0..U+FDEF"),
        ("ufdf0", "\ufdf0", "just after the noncharacter block"),
        ("ufffd", "\ufffd", "the replacement character"),
        ("u10000", "\U00010000", "the first 4-byte UTF-8 character"),
        ("u10fffd", "\U0010fffd", "the last character that is not a noncharacter"),
    ]
    for name, ch, why in edges:
        raw = ch.encode("utf-8")
        c.accept(f"utf8-edge-{name}", why, b'["' + raw + b'"]')
        escaped = ch.encode("utf-16-be")
        units = [escaped[i:i + 2].hex() for i in range(0, len(escaped), 2)]
        c.accept(f"escape-edge-{name}", f"{why}, as a \\u escape", b'["' + "".join(f"\\u{u}" for u in units).encode() + b'"]')


def _syntax(c: _Cases) -> None:
    bad = [
        ("empty", b"", "no document"),
        ("spaces-only", b"   ", "whitespace only"),
        ("unclosed-array", b"[1,2", "the data ends inside an array"),
        ("trailing-comma", b"[1,]", "a trailing comma"),
        ("trailing-comma-object", b'{"a":1,}', "a trailing comma in an object"),
        ("mismatched", b"[}", "a mismatched closing bracket"),
        ("missing-comma", b"[1 2]", "a missing comma"),
        ("missing-colon", b'{"a" 1}', "a missing colon"),
        ("number-key", b"{1:2}", "a member name must be a string"),
        ("unquoted-key", b"{a:1}", "unquoted member names"),
        ("single-quotes", b"{'a':1}", "single-quoted strings"),
        ("trailing-data", b"[1] x", "data after the document"),
        ("two-documents", b"1 2", "two documents"),
        ("nan", b"NaN", "NaN is not JSON"),
        ("infinity", b"[Infinity]", "Infinity is not JSON"),
        ("minus-infinity", b"[-Infinity]", "-Infinity is not JSON"),
        ("truncated-literal", b"tru", "a truncated literal"),
        ("wrong-case-literal", b"True", "literals are lower case"),
        ("leading-zero", b"[01]", "leading zeros"),
        ("leading-zero-neg", b"-012", "leading zeros after a minus"),
        ("trailing-point", b"1.", "a point without digits"),
        ("point-exp", b"[1.e5]", "a point without digits before an exponent"),
        ("empty-exp", b"[1e+]", "an exponent without digits"),
        ("bare-fraction", b"[.5]", "a fraction without its integer part"),
        ("plus-sign", b"[+1]", "a leading plus sign"),
        ("lone-minus", b"[-]", "a minus without digits"),
        ("hex-number", b"[0x1F]", "hexadecimal numbers"),
        ("raw-tab", b'"a\tb"', "a raw tab inside a string"),
        ("raw-newline", b'"a\nb"', "a raw line feed inside a string"),
        ("raw-nul", b'"a\x00b"', "a raw NUL inside a string"),
        ("raw-unit-sep", b'"\x1f"', "a raw U+001F inside a string"),
        ("bad-escape", b'"a\\x41"', "`\\x` is not an escape"),
        ("bad-hex-escape", b'"\\u12G4"', "`\\u` with a non-hex digit"),
        ("upper-u-escape", b'"\\U0041"', "`\\U` is not an escape"),
        ("quote-escape", b"\"\\'\"", "`\\'` is not an escape"),
        ("unterminated", b'"abc', "an unterminated string"),
        ("comment-line", b"[1] // c", "line comments"),
        ("comment-block", b"/* c */ [1]", "block comments"),
        ("nbsp", b"[1,\xc2\xa02]", "U+00A0 is not JSON whitespace"),
        ("vertical-tab", b"[1,\x0b2]", "vertical tab is not JSON whitespace"),
        ("form-feed", b"[1,\x0c2]", "form feed is not JSON whitespace"),
        ("utf16-bom", b"\xff\xfe[\x00]\x00", "UTF-16 text is not UTF-8 JSON"),
        ("nul-after", b"{}\x00", "a NUL byte after the document"),
    ]
    for name, data, why in bad:
        c.refuse(f"syntax-{name}", why, data, "syntax")


def _utf8(c: _Cases) -> None:
    bad = [
        ("overlong-nul", b"\xc0\x80", "an overlong NUL"),
        ("overlong-2", b"\xc1\xbf", "an overlong 2-byte form"),
        ("overlong-3", b"\xe0\x80\x80", "an overlong 3-byte form"),
        ("overlong-4", b"\xf0\x80\x80\x80", "an overlong 4-byte form"),
        ("encoded-high-surrogate", b"\xed\xa0\x80", "a UTF-8 encoded high surrogate (CESU-8)"),
        ("encoded-low-surrogate", b"\xed\xbf\xbf", "a UTF-8 encoded low surrogate"),
        ("encoded-pair", b"\xed\xa0\xbd\xed\xb8\x80", "a surrogate pair encoded as two 3-byte forms"),
        ("beyond-10ffff", b"\xf4\x90\x80\x80", "a code point beyond U+10FFFF"),
        ("f5-lead", b"\xf5\x80\x80\x80", "the lead byte F5 never occurs"),
        ("truncated-3", b"\xe3\x81", "a truncated 3-byte sequence"),
        ("truncated-4", b"\xf0\x9f\x98", "a truncated 4-byte sequence"),
        ("lone-continuation", b"\x80", "a lone continuation byte"),
        ("ff", b"\xff", "the byte FF never occurs"),
        ("six-byte", b"\xfc\x80\x80\x80\x80\x80", "the old 6-byte form"),
        ("latin1", b"caf\xe9", "Latin-1 text is not UTF-8"),
    ]
    for name, seq, why in bad:
        c.refuse(f"utf8-{name}", f"{why}, inside a string", b'["ok","ab' + seq + b'"]', "utf8")
    c.refuse("utf8-in-key", "ill-formed UTF-8 in a member name", b'{"a\xc0\x80":1}', "utf8")
    c.refuse("utf8-truncated-at-end", "a string that ends inside a UTF-8 sequence", b'"\xe2\x82', "utf8")


def _surrogates(c: _Cases) -> None:
    bad = [
        ("high", b'["\\ud800"]', "a lone high surrogate escape"),
        ("low", b'["x\\uDC00"]', "a lone low surrogate escape"),
        ("high-then-letter", b'["\\ud800\\u0041"]', "a high surrogate followed by an escaped letter"),
        ("high-high", b'["\\ud800\\ud800"]', "two high surrogates"),
        ("reversed", b'["\\udc00\\ud800"]', "a low then a high surrogate"),
        ("high-then-raw", b'["\\ud83dx"]', "a high surrogate followed by a raw character"),
        ("high-at-end", b'["\\udbff"]', "a high surrogate at the end of the string"),
        ("high-then-short-escape", b'["\\ud800\\n"]', "a high surrogate followed by a short escape"),
        ("in-key", b'{"\\udfff":1}', "a lone surrogate in a member name"),
    ]
    for name, data, why in bad:
        c.refuse(f"surrogate-{name}", why, data, "lone_surrogate")


def _duplicates(c: _Cases) -> None:
    bad = [
        ("plain", b'{"a":1,"a":2}', "a repeated member name"),
        ("same-value", b'{"a":1,"a":1}', "a repeated name with the same value"),
        ("escaped", b'{"a":1,"\\u0061":2}', "names equal after unescaping a \\u escape"),
        ("solidus", b'{"a\\/":1,"a/":2}', "names equal after unescaping `\\/`"),
        ("pair", b'{"\xf0\x9f\x98\x80":1,"\\ud83d\\ude00":2}', "a raw and an escaped astral character"),
        ("upper-hex", b'{"\\u00e9":1,"\\u00E9":2}', "upper and lower case hex in escapes"),
        ("nested", b'{"x":{"k":1,"b":2,"k":3}}', "a duplicate inside a nested object"),
        ("non-adjacent", b'{"a":1,"b":2,"c":3,"a":4}', "a duplicate that is not adjacent"),
        ("empty-name", b'{"":1,"":2}', "the empty name twice"),
        ("in-array", b'[{"id":1},{"id":2,"id":3}]', "a duplicate in an object inside an array"),
    ]
    for name, data, why in bad:
        c.refuse(f"duplicate-{name}", why, data, "duplicate_name")


def _limits(c: _Cases) -> None:
    c.refuse("bom-object", "a UTF-8 byte order mark before the document (RFC 8259 §8.1)", b"\xef\xbb\xbf{}", "bom")
    c.refuse("bom-scalar", "a byte order mark before a scalar", b"\xef\xbb\xbf1", "bom")
    # Beyond 20,000 levels: above every common parser's limit (Go's is 10,000), far above ajpcore's 512.
    deep = 20_000
    c.refuse("depth-arrays", "20,000 nested arrays: refused with an error, never a crash", b"[" * deep, "depth")
    c.refuse("depth-objects", "20,000 nested objects", b'{"":' * deep, "depth")
    c.refuse("depth-closed", "20,000 nested arrays, properly closed", b"[" * deep + b"]" * deep, "depth")
    unsafe = [
        ("2-53-plus-1", b"9007199254740993", "2^53+1 has no double: a JavaScript peer would read 2^53"),
        ("minus-2-53-minus-1", b"-9007199254740993", "-(2^53+1) has no double"),
        ("2-64-plus-1", b"18446744073709551617", "2^64+1 would silently become 2^64"),
        ("21-digits", b"123456789012345678901", "21 digits that no double has"),
        ("in-object", b'{"amount":9007199254740995}', "2^53+3 inside an object"),
        ("huge-odd", b"1" + b"0" * 30 + b"1", "10^31+1 is no double"),
    ]
    for name, data, why in unsafe:
        c.refuse(f"unsafe-int-{name}", why, data, "unsafe_integer")
    overflow = [
        ("1e400", b"1e400", "10^400 overflows binary64"),
        ("minus-1e400", b"-1e400", "-10^400 overflows binary64"),
        ("just-over", b"1.8e308", "just beyond the largest double"),
        ("exp-0309", b"1E+0309", "an exponent with a leading zero that overflows"),
        ("int-400-digits", b"1" + b"0" * 400, "an integer literal of 401 digits"),
        ("long-mantissa", b"9" * 308 + b".9e+1", "a long mantissa with a small exponent that overflows"),
        ("fraction-exp", b"0." + b"0" * 500 + b"1e810", "a tiny mantissa with a huge exponent that overflows"),
        ("in-array", b"[0,1e999]", "an overflowing number inside an array"),
    ]
    for name, data, why in overflow:
        c.refuse(f"overflow-{name}", why, data, "number_range")


def _noncharacters(c: _Cases) -> None:
    chars = [
        ("ufdd0", "\ufdd0", "U+FDD0, the first of the 32 noncharacters U+FDD0..U+FDEF"),
        ("ufdef", "\ufdef", "U+FDEF, the last of that block"),
        ("ufffe", "\ufffe", "U+FFFE, a byte-swapped BOM, is a noncharacter"),
        ("uffff", "\uffff", "U+FFFF is a noncharacter"),
        ("u1fffe", "\U0001fffe", "U+1FFFE, a plane-1 noncharacter"),
        ("u10ffff", "\U0010ffff", "U+10FFFF, the last code point, is a noncharacter"),
    ]
    for name, ch, why in chars:
        raw = ch.encode("utf-8")
        c.refuse(f"nonchar-raw-{name}", f"{why} (raw UTF-8)", b'["' + raw + b'"]', "noncharacter")
        units = ch.encode("utf-16-be")
        esc = "".join(f"\\u{units[i:i + 2].hex()}" for i in range(0, len(units), 2)).encode()
        c.refuse(f"nonchar-escaped-{name}", f"{why} (\\u escape)", b'["' + esc + b'"]', "noncharacter")
    c.refuse("nonchar-in-key", "a noncharacter in a member name", b'{"\xef\xb7\x90":1}', "noncharacter")


def build() -> List[Dict[str, Any]]:
    c = _Cases()
    _accepts(c)
    _syntax(c)
    _utf8(c)
    _surrogates(c)
    _duplicates(c)
    _limits(c)
    if noncharacters_refused():
        _noncharacters(c)
    return c.cases
