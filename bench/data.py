"""Deterministic bench fixtures, shared by every bench group.

``offer``: a ~1.2 KB JobOffer shaped like the AJP specification's example.
``result64k``: a JobResult whose ``output`` is ~64 KB of nested records.
``mixed8m``: ~8 MB of mixed JSON types (ASCII and non-ASCII strings, escapes,
ints, float-heavy arrays, booleans, nulls, nesting), built from a fixed seed.
``text-ascii``, ``text-latin1``, ``text-cjk``, ``text-emoji``: ~200 KB documents of
paragraphs whose title and text strings each have one PEP 393 kind (ASCII, Latin-1 = kind 1,
CJK = kind 2, emoji = kind 4; see ``TEXT_FIXTURES``).
``numbers``: ~190 KB of number-heavy records: floats across magnitudes (1e-300 to 1e300, short
decimals, full 17-digit doubles) and ints up to 2^53 - 1 (``NUMBER_FIXTURES``).
``names-latin1``, ``names-cjk``, ``names-emoji``: ~200 KB of text records whose member names
are non-ASCII too, in the same script as their values (emoji: with skin-tone modifiers and
ZWJ sequences; ``NAME_FIXTURES``).
``catalog-pretty``, ``records-wide``, ``geojson``, ``mesh``, ``int-array``: the shapes of public JSON
benchmark documents (issue 33; ``DOCUMENT_FIXTURES``): an event catalogue pretty-printed with a
four-space indent, API records of 13-60 members with short strings, polygons of full-precision
coordinates, a mesh of short floats with integer indices, a flat array of integers.
Each is built once per process; ``encoded(name)`` gives its canonical bytes, ``wire(name)`` the
bytes a receiver gets (the same, but the pretty-printed ``catalog-pretty``).
"""

from __future__ import annotations

import functools
import random
from typing import Any, Callable, Dict, List

SECRET = b"bench-secret-0123456789abcdef"


def _offer() -> Dict[str, Any]:
    return {
        "ajp": "0.1",
        "job_id": "job_m3x9k2a1_4f2c9e7b1a05",
        "parent_job_id": None,
        "from": {
            "type": "human",
            "id": "user_ada",
            "provenance_id": None,
            "declaration_url": None,
        },
        "to": {"provenance_id": "provenance:github:example/research-assistant"},
        "task": {
            "type": "research",
            "instruction": (
                "Find the three most cited papers on sparse attention published this year. "
                "Return titles, authors, citation counts, and a two-sentence summary of each."
            ),
            "input": {"topic": "sparse attention", "year": 2026, "limit": 3, "languages": ["en", "fr"]},
            "output_format": "json",
        },
        "context": {
            "credentials": {},
            "memory": [
                {"role": "user", "content": "Prefer peer-reviewed venues.", "weight": 0.75},
                {"role": "assistant", "content": "Noted: peer-reviewed only.", "weight": 0.5},
            ],
            "constraints": ["no paywalled sources", "cite DOIs", "max 300 words"],
        },
        "budget": {"max_usd": 0.5, "max_seconds": 120, "max_llm_tokens": 10000},
        "callback": {
            "url": "https://agents.example.org/api/jobs/job_m3x9k2a1_4f2c9e7b1a05/result",
            "headers": {"Authorization": "Bearer token_0123456789abcdef"},
        },
        "issued_at": "2026-03-05T10:00:00Z",
        "expires_at": "2026-03-05T10:02:00Z",
        "signature": "sha256:" + "0" * 64,
    }


_WORDS = [
    "agent", "job", "offer", "résumé", "naïve", "Zürich", "東京", "данные", "🚀", "tab\there",
    "quote\"d", "back\\slash", "line\nbreak", "signature", "budget", "callback", "ünïcödé",
]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _record(rng: random.Random, i: int) -> Dict[str, Any]:
    return {
        "id": i,
        "name": _text(rng, rng.randint(1, 6)),
        "score": rng.random() * 1000,
        "ratio": rng.choice([0.1, 0.25, 1e-7, 5.0, -0.0, 1e21, 123.456, rng.uniform(-1e6, 1e6)]),
        "count": rng.randint(-(2**53) + 1, 2**53 - 1),
        "small": rng.randint(0, 1000),
        "ok": rng.random() < 0.5,
        "none": None,
        "tags": [_text(rng, 1) for _ in range(rng.randint(0, 4))],
        "vector": [rng.uniform(-1, 1) for _ in range(rng.randint(4, 12))],
        "nested": {"level": {"deeper": {"value": rng.randint(0, 10**6), "label": _text(rng, 2)}}},
    }


def _result64k() -> Dict[str, Any]:
    rng = random.Random(64)
    records = []
    size = 0
    while size < 64 * 1024:
        rec = _record(rng, len(records))
        records.append(rec)
        size += 450  # approximate canonical size of one record
    return {
        "job_id": "job_m3x9k2a1_4f2c9e7b1a05",
        "status": "completed",
        "output": {"papers": records, "summary": _text(rng, 40)},
        "constraints_asserted": ["no paywalled sources", "cite DOIs"],
        "usage": {"llm_tokens": 8123, "cost_usd": 0.37, "duration_seconds": 93.5},
        "agent": {"provenance_id": "provenance:github:example/research-assistant", "model": "example-model-1"},
        "completed_at": "2026-03-05T10:01:33.000Z",
        "signature": "sha256:" + "0" * 64,
    }


def _mixed8m() -> Dict[str, Any]:
    rng = random.Random(8)
    records = [_record(rng, i) for i in range(17_000)]
    return {"kind": "mixed", "records": records, "floats": [rng.uniform(-1e9, 1e9) for _ in range(43_000)]}


# -- text fixtures: one string kind per document --

_TEXT_BYTES = 200 * 1024  # canonical size each text fixture reaches (just over)


def _alphabet(*ranges: range) -> List[str]:
    # Noncharacters (U+FDD0..FDEF, U+xFFFE/F) and surrogates never fall in the ranges used.
    return [chr(c) for r in ranges for c in r]


_LATIN1_LETTERS = _alphabet(range(0x61, 0x7B), range(0xE0, 0xF7), range(0xF8, 0x100))
_CJK = _alphabet(range(0x4E00, 0x9FA6))                      # CJK Unified Ideographs
_CJK_PUNCT = ["\u3001", "\u3002", "\uFF0C", "\u300C", "\u300D"]  # 、。，「」
_EMOJI = _alphabet(range(0x1F300, 0x1F650), range(0x1F680, 0x1F6C6), range(0x1F900, 0x1F9FF))


def _ascii_word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10)))


def _latin1_word(rng: random.Random) -> str:
    # About one letter in five is accented: French or German prose, not random bytes.
    return "".join(
        rng.choice(_LATIN1_LETTERS[26:]) if rng.random() < 0.2 else rng.choice(_LATIN1_LETTERS[:26])
        for _ in range(rng.randint(2, 10))
    )


def _cjk_sentence(rng: random.Random) -> str:
    return "".join(rng.choice(_CJK) for _ in range(rng.randint(8, 30))) + rng.choice(_CJK_PUNCT)


def _emoji_word(rng: random.Random) -> str:
    # Chat-style text: ASCII words with emoji between them, every string has at least one.
    if rng.random() < 0.5:
        return "".join(rng.choice(_EMOJI) for _ in range(rng.randint(1, 3)))
    return _ascii_word(rng)


def _paragraph(kind: str, rng: random.Random, words: int = 60) -> str:
    n = rng.randint(4, words)
    if kind == "cjk":
        return "".join(_cjk_sentence(rng) for _ in range(max(1, n // 8)))
    word = {"ascii": _ascii_word, "latin1": _latin1_word, "emoji": _emoji_word}[kind]
    text = " ".join(word(rng) for _ in range(n))
    if kind == "emoji":
        text += " " + rng.choice(_EMOJI)  # the string's kind is 4 whatever the draw
    if kind == "latin1":
        text += " \u00e9t\u00e9"  # "été": the string's kind is Latin-1, not ASCII
    return text


def _text_fixture(kind: str) -> Callable[[], Dict[str, Any]]:
    def build() -> Dict[str, Any]:
        rng = random.Random(f"text-{kind}")
        paragraphs: List[Dict[str, Any]] = []
        size = 0
        while size < _TEXT_BYTES:
            text = _paragraph(kind, rng)
            # One paragraph in eight has a line break, one in sixteen a quotation: real text has a few escapes.
            if rng.random() < 0.125:
                text += "\n" + _paragraph(kind, rng)
            if rng.random() < 0.0625:
                text = '"' + text + '"'
            title = _paragraph(kind, rng, 8)
            paragraphs.append({"id": len(paragraphs), "title": title, "text": text})
            size += len(text.encode("utf-8")) + len(title.encode("utf-8")) + 40
        return {"kind": f"text-{kind}", "paragraphs": paragraphs}

    return build


# -- number-heavy fixture: floats across magnitudes, ints up to 2^53 --

_NUMBER_BYTES = 200 * 1024


def _float(rng: random.Random) -> float:
    # RFC 8785 writes a double in [2^53, 1e21) as digits without an exponent: an integer that
    # a strict I-JSON reader refuses (beyond 2^53) and that is not the double's exact value.
    # Such doubles are drawn again; every other magnitude from 1e-300 to 1e300 stays.
    while True:
        x = _float_draw(rng)
        if not 2.0**53 <= abs(x) < 1e21:
            return x


def _float_draw(rng: random.Random) -> float:
    kind = rng.random()
    if kind < 0.3:  # a short decimal, as prices and measurements are written
        return round(rng.uniform(-1e4, 1e4), rng.randint(0, 4))
    if kind < 0.6:  # a full double of any magnitude (17 significant digits)
        return rng.uniform(1.0, 10.0) * 10.0 ** rng.randint(-300, 300) * rng.choice((1, -1))
    if kind < 0.8:  # a uniform draw in [0, 1): 16-17 digits, exponent 0
        return rng.random()
    return float(rng.randint(0, 2**53 - 1)) * 10.0 ** rng.randint(-30, 30)


def _int(rng: random.Random) -> int:
    # Magnitudes spread over every bit length up to 53: small counters to IDs near 2^53.
    return rng.randint(0, 2 ** rng.randint(1, 53) - 1) * rng.choice((1, 1, 1, -1))


def _numbers() -> Dict[str, Any]:
    rng = random.Random("numbers")
    rows: List[Dict[str, Any]] = []
    size = 0
    while size < _NUMBER_BYTES:
        row = {
            "id": len(rows),
            "t": 1_700_000_000_000 + rng.randint(0, 10**9),
            "x": _float(rng),
            "y": _float(rng),
            "values": [_float(rng) for _ in range(rng.randint(4, 16))],
            "counts": [_int(rng) for _ in range(rng.randint(2, 8))],
        }
        rows.append(row)
        size += len(repr(row))
    return {"kind": "numbers", "rows": rows, "max_safe": 2**53 - 1, "min_safe": -(2**53 - 1)}


# -- text records whose member names are non-ASCII too --

_SKIN_TONES = _alphabet(range(0x1F3FB, 0x1F400))                      # U+1F3FB..1F3FF modifiers
_HANDS = ["👋", "👍", "👎", "👏", "🙌", "🙏",
          "🖐", "✌", "🤝", "🧑", "👩", "👨"]
_ZWJ = ["👩‍💻", "👨‍🍳", "🧑‍🚀"]


def _emoji_token(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(_HANDS) + rng.choice(_SKIN_TONES)   # e.g. 👍🏽
    if roll < 0.7:
        return rng.choice(_ZWJ)                               # e.g. 👩‍💻
    return rng.choice(_EMOJI)


def _name_word(kind: str, rng: random.Random) -> str:
    if kind == "latin1":
        return _latin1_word(rng) + rng.choice(["é", "ü", "ß", "ñ", "ø"])   # never plain ASCII
    if kind == "cjk":
        return "".join(rng.choice(_CJK) for _ in range(rng.randint(2, 4)))
    return _ascii_word(rng) + "_" + _emoji_token(rng)


def _name_value(kind: str, rng: random.Random) -> str:
    if kind == "emoji":
        return " ".join(_emoji_token(rng) if rng.random() < 0.4 else _ascii_word(rng) for _ in range(rng.randint(3, 24)))
    return _paragraph(kind, rng, 16)


def _names_fixture(kind: str) -> Callable[[], Dict[str, Any]]:
    def build() -> Dict[str, Any]:
        rng = random.Random(f"names-{kind}")
        # A vocabulary of member names, as real records reuse a schema's names.
        vocabulary = sorted({_name_word(kind, rng) for _ in range(64)})
        records: List[Dict[str, Any]] = []
        size = 0
        while size < _TEXT_BYTES:
            names = rng.sample(vocabulary, rng.randint(3, 8))
            record: Dict[str, Any] = {name: _name_value(kind, rng) for name in names}
            record[rng.choice(vocabulary) + "#"] = {_name_word(kind, rng): rng.randint(0, 1000)}
            records.append(record)
            size += sum(len(k.encode("utf-8")) + len(str(v).encode("utf-8")) + 6 for k, v in record.items())
        return {"kind": f"names-{kind}", "records": records}

    return build


# -- documents shaped like public JSON benchmarks (issue 33) --

_DOCUMENT_BYTES = 200 * 1024


def _catalog() -> Dict[str, Any]:
    # An event catalogue: id-keyed names, events with nulls and id lists, performances with
    # nested price and seat lists; sent pretty-printed (``PRETTY``), most of its bytes indentation.
    rng = random.Random("catalog-pretty")
    areas = {str(138586341 + i): _ascii_word(rng).upper() for i in range(40)}
    events: Dict[str, Any] = {}
    performances: List[Dict[str, Any]] = []
    size = 0
    while size < _DOCUMENT_BYTES // 4:
        event_id = 138586341 + 1000 + len(events)
        events[str(event_id)] = {
            "description": None, "id": event_id, "logo": rng.choice([None, f"/images/UE0AAAAACEKo{rng.randint(0, 99)}QAAAAVDSVRN"]),
            "name": " ".join(_ascii_word(rng).capitalize() for _ in range(rng.randint(1, 4))),
            "subTopicIds": sorted(rng.sample(range(337184262, 337184300), rng.randint(1, 5))),
            "subjectCode": None, "subtitle": None,
            "topicIds": sorted(rng.sample(range(324846098, 324846110), rng.randint(1, 3))),
        }
        for _ in range(rng.randint(1, 3)):
            seat_ids = rng.sample(range(338937271, 338937300), rng.randint(1, 4))
            performances.append({
                "eventId": event_id, "id": 339887544 + len(performances), "logo": None, "name": None,
                "prices": [{"amount": rng.choice([9500, 19000, 29000, 47500]), "audienceSubCategoryId": 337100890,
                            "seatCategoryId": s} for s in seat_ids],
                "seatCategories": [{"areas": [{"areaId": int(a), "blockIds": []} for a in rng.sample(sorted(areas), rng.randint(1, 6))],
                                    "seatCategoryId": s} for s in seat_ids],
                "seatMapImage": None, "start": 1372701600000 + rng.randint(0, 10**9) * 1000, "venueCode": "PLEYEL_PLEYEL",
            })
        size += 200 + 350 * len(seat_ids)
    return {"areaNames": areas, "events": events, "performances": performances, "venueNames": {"PLEYEL_PLEYEL": "Salle Pleyel"}}


def _short(rng: random.Random) -> str:
    return rng.choice(["", "en", "ja", "und", "web", "false", "recent"]) if rng.random() < 0.3 else _ascii_word(rng)


def _user(rng: random.Random, i: int) -> Dict[str, Any]:
    # 40 members: an API's user object, short strings, counts, flags and nulls.
    user: Dict[str, Any] = {
        "id": 1186275104 + i, "id_str": str(1186275104 + i), "name": _short(rng), "screen_name": _ascii_word(rng),
        "location": _short(rng), "description": " ".join(_ascii_word(rng) for _ in range(rng.randint(0, 12))),
        "url": None, "protected": False, "followers_count": rng.randint(0, 10**6), "friends_count": rng.randint(0, 5000),
        "listed_count": rng.randint(0, 99), "created_at": "Sun Jul 13 09:32:41 +0000 2014",
        "favourites_count": rng.randint(0, 10**5), "utc_offset": rng.choice([None, 32400, -18000]),
        "time_zone": rng.choice([None, "Tokyo", "Irkutsk"]), "geo_enabled": rng.random() < 0.5, "verified": False,
        "statuses_count": rng.randint(0, 10**5), "lang": "ja", "contributors_enabled": False, "is_translator": False,
        "is_translation_enabled": False, "profile_background_color": "C0DEED",
        "profile_background_image_url": "http://abs.twimg.com/images/themes/theme1/bg.png",
        "profile_background_tile": False, "profile_image_url": f"http://pbs.twimg.com/profile_images/{i}/a_normal.png",
        "profile_link_color": "0084B4", "profile_sidebar_border_color": "C0DEED",
        "profile_sidebar_fill_color": "DDEEF6", "profile_text_color": "333333", "profile_use_background_image": True,
        "default_profile": True, "default_profile_image": False, "following": False, "follow_request_sent": False,
        "notifications": False, "entities": {"description": {"urls": []}},
    }
    for k in range(rng.randint(0, 20)):  # 37-57 members, the names an API's schema fixes
        user[f"extension_{k}"] = rng.choice([None, True, rng.randint(0, 99), _short(rng)])
    return user


def _records_wide() -> Dict[str, Any]:
    rng = random.Random("records-wide")
    statuses: List[Dict[str, Any]] = []
    size = 0
    while size < _DOCUMENT_BYTES:
        i = len(statuses)
        status = {
            "metadata": {"result_type": "recent", "iso_language_code": "ja"}, "created_at": "Sun Aug 31 00:29:15 +0000 2014",
            "id": 505874924095815681 % 2**53 + i, "id_str": str(505874924095815681 + i),
            "text": " ".join(_ascii_word(rng) for _ in range(rng.randint(3, 20))),
            "source": "<a href=\"http://twitter.com/download/iphone\" rel=\"nofollow\">Twitter for iPhone</a>",
            "truncated": False, "in_reply_to_status_id": None, "in_reply_to_status_id_str": None,
            "in_reply_to_user_id": rng.choice([None, 1186275104]), "in_reply_to_user_id_str": None,
            "in_reply_to_screen_name": None, "user": _user(rng, i), "geo": None, "coordinates": None, "place": None,
            "contributors": None, "retweet_count": rng.randint(0, 99), "favorite_count": rng.randint(0, 99),
            "entities": {"hashtags": [], "symbols": [], "urls": [], "user_mentions": [
                {"screen_name": _ascii_word(rng), "name": _short(rng), "id": rng.randint(0, 2**32), "indices": [0, rng.randint(1, 15)]}
                for _ in range(rng.randint(0, 2))]},
            "favorited": False, "retweeted": False, "lang": "ja",
        }
        statuses.append(status)
        size += len(repr(status))
    return {"statuses": statuses, "search_metadata": {"completed_in": 0.087, "max_id": 505874924095815681 % 2**53, "count": len(statuses)}}


def _geojson() -> Dict[str, Any]:
    # Polygons as a random walk of full-precision doubles (17 significant digits), as in country borders.
    rng = random.Random("geojson")
    features: List[Dict[str, Any]] = []
    size = 0
    while size < _DOCUMENT_BYTES:
        lon, lat = rng.uniform(-140.0, -55.0), rng.uniform(42.0, 80.0)
        ring = []
        for _ in range(rng.randint(20, 400)):
            lon += rng.uniform(-0.05, 0.05)
            lat += rng.uniform(-0.05, 0.05)
            ring.append([lon, lat])
        ring.append(ring[0])
        features.append({"type": "Feature", "properties": {"name": _ascii_word(rng)},
                         "geometry": {"type": "Polygon", "coordinates": [ring]}})
        size += 40 * len(ring)
    return {"type": "FeatureCollection", "features": features}


def _mesh() -> Dict[str, Any]:
    # A 3D mesh: positions and texture coordinates with 4-7 significant digits, triangle indices.
    rng = random.Random("mesh")
    vertices = 3000
    positions = [round(rng.uniform(-10.0, 10.0), rng.randint(3, 6)) for _ in range(3 * vertices)]
    tex = [round(rng.random(), rng.randint(4, 7)) for _ in range(2 * vertices)]
    indices = [rng.randrange(vertices) for _ in range(6 * vertices)]
    return {"batches": [{"indexRange": [0, len(indices)], "vertexRange": [0, vertices], "usesVColors": False,
                         "isSkinned": False, "material": 0}],
            "positions": positions, "tex0": tex, "indices": indices}


def _int_array() -> List[int]:
    rng = random.Random("int-array")
    return [_int(rng) for _ in range(_DOCUMENT_BYTES // 10)]


BUILDERS: Dict[str, Callable[[], Any]] = {
    "offer": _offer,
    "result64k": _result64k,
    "mixed8m": _mixed8m,
}
FIXTURES = list(BUILDERS)
TEXT_FIXTURES = ["text-ascii", "text-latin1", "text-cjk", "text-emoji"]
for _name in TEXT_FIXTURES:
    BUILDERS[_name] = _text_fixture(_name[len("text-"):])
NUMBER_FIXTURES = ["numbers"]
BUILDERS["numbers"] = _numbers
NAME_FIXTURES = ["names-latin1", "names-cjk", "names-emoji"]
for _name in NAME_FIXTURES:
    BUILDERS[_name] = _names_fixture(_name[len("names-"):])
DOCUMENT_FIXTURES = ["catalog-pretty", "records-wide", "geojson", "mesh", "int-array"]
BUILDERS.update(zip(DOCUMENT_FIXTURES, [_catalog, _records_wide, _geojson, _mesh, _int_array]))
PRETTY = {"catalog-pretty": 4}
"""Fixtures sent pretty-printed: name -> indent (``wire``)."""
SHAPE_FIXTURES = NUMBER_FIXTURES + NAME_FIXTURES + DOCUMENT_FIXTURES
"""Fixtures of other shapes than the bench's first ones (issues 23 and 33): ``decode`` and ``canonicalize`` groups."""


@functools.lru_cache(maxsize=None)
def value(name: str) -> Any:
    """The fixture as a Python value (built once; do not mutate)."""
    return BUILDERS[name]()


@functools.lru_cache(maxsize=None)
def encoded(name: str) -> bytes:
    """The fixture's RFC 8785 canonical bytes (what a receiver gets on the wire)."""
    import rfc8785

    return rfc8785.dumps(value(name))


@functools.lru_cache(maxsize=None)
def wire(name: str) -> bytes:
    """The fixture as a receiver gets it: ``encoded(name)``, or pretty-printed for a ``PRETTY`` fixture."""
    if name not in PRETTY:
        return encoded(name)
    import json

    return json.dumps(value(name), indent=PRETTY[name], ensure_ascii=False, allow_nan=False).encode("utf-8")


# -- IATP manifest fixture --


def _manifest() -> Dict[str, Any]:
    """A ~1 KB IATP capability manifest using every member the schema names, plus `scopes`."""
    return {
        "$schema": "http://inter-agent-trust.org/v1/schema",
        "identity": {
            "agent_id": "booking-agent-v2.1.0",
            "verification_key": "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=",
            "owner": "Example Travel",
            "contact": "security@example.org",
        },
        "trust_level": "verified_partner",
        "scopes": ["booking:read", "booking:write"],
        "capabilities": {
            "idempotency": True,
            "idempotency_duration_seconds": 86400,
            "concurrency_limit": 10,
            "sla_latency_ms": 2000,
            "sla_availability": 0.999,
        },
        "reversibility": {
            "level": "partial",
            "undo_window_seconds": 3600,
            "compensation_method": "refund_minus_fee",
            "compensation_sla_ms": 5000,
            "compensation_notes": "Free cancellation within one hour, then a fee.",
            "compensation_endpoint": "POST /compensate/{transaction_id}",
            "undo_conditions": {"until_state": "ticketed", "check_endpoint": "GET /bookings/{id}/status"},
        },
        "privacy": {
            "retention_policy": "temporary",
            "retention_duration_seconds": 2592000,
            "storage_location": "eu-central-1",
            "human_in_loop": False,
            "training_consent": False,
            "encryption_at_rest": True,
            "encryption_in_transit": True,
            "data_processing_addendum": "https://example.org/dpa",
        },
        "authentication": {"methods": ["oauth2", "mutual_tls"], "required": True},
        "rate_limiting": {"requests_per_second": 5, "requests_per_minute": 200, "burst_limit": 20},
        "protocol_version": "1.0",
        "manifest_version": "2.1.0",
        "updated_at": "2026-01-23T00:00:00Z",
    }


BUILDERS["manifest"] = _manifest  # after FIXTURES: the generic benches keep their three fixtures
