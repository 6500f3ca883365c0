"""The receive fast path (``offer_shape``: native ``native/offer_shape.pxi``, pure ``ajpcore/_core_py/offer_shape.py``)
against its judges: jsonschema-rs with the shipped offer schema, ``validate_offer(strict=True)``, the recipient rule.

The fast path only proves: a result must never be given where a judge refuses, and on offers whose URIs
are of the plain form it proves (no userinfo, no IP literal, ASCII) it must be given wherever the judges
accept.  Both twins are held to the same judges and to each other.
"""

from __future__ import annotations

import json
import math

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import ajp
from ajpcore.ajp import _pipeline
from ajpcore.ajp._messages import _OFFER_SCHEMA
from ajpcore.ajp._rules import validate_offer
from ajpcore.signing import sign
from ajpcore.strategies import job_offers, offer_mutations
from ajpcore.timestamps import timestamp_micros

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
NOW_S = 1_800_000_000
NOW_US = NOW_S * 1_000_000
SECRET = b"offer-shape-secret"
_URI_FORMAT = jsonschema_rs.validator_for({"type": "string", "format": "uri"}, validate_formats=True)

# Characters that matter to RFC 3986, and a few that do not belong.
_URI_ALPHABET = "aZ09:/?#[]@!$&'()*+,;=-._~%fF é|{}\\^`\"<> \n"
_URIS = st.one_of(
    st.text(alphabet=_URI_ALPHABET, max_size=24),
    st.builds(lambda s, rest: s + rest, st.sampled_from(["https:", "https://", "urn:", "a+b.c-d:", "h://x:", "1a:"]),
              st.text(alphabet=_URI_ALPHABET, max_size=20)),
)


def _uri_strings(value):
    """The strings of the schema's ``format: uri`` members (``from.declaration_url``, ``callback.url``)."""
    out = []
    for outer, inner in (("from", "declaration_url"), ("callback", "url")):
        node = value.get(outer) if type(value) is dict else None
        if type(node) is dict and type(node.get(inner)) is str:
            out.append(node[inner])
    return out


def _plain_uri(text):
    """Whether a URI is of the form the fast path proves when valid: ASCII, no ``@`` (userinfo), no ``[``
    (IP literal).  Stricter than the fast path (``@`` is fine in a path), so a test on it never excuses too much."""
    return text.isascii() and "@" not in text and "[" not in text


def _plain(value):
    return all(_plain_uri(text) for text in _uri_strings(value))


def _wire(impl, doc):
    """``doc`` as the pipeline sees it: what ``decode`` returns for its JSON text."""
    return impl.decode(json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass"))


_OFFERS = st.one_of(job_offers(), offer_mutations(), job_offers(issued_at=NOW_S - 60, lifetime=600))


@FUZZ
@given(doc=_OFFERS)
def test_schema_instants_agree_with_jsonschema_rs(impl, doc):
    """Proven exactly where jsonschema-rs accepts (on plain URIs), never where it refuses; the instants are
    ``timestamp_micros`` of the two members."""
    try:
        value = _wire(impl, doc)
    except ValueError:
        return  # not I-JSON: never reaches the shape step
    valid = not _OFFER_SCHEMA.errors(value)
    instants = impl.offer_schema_instants(value)
    if instants is not None:
        assert valid
        assert instants == (timestamp_micros(value["issued_at"]), timestamp_micros(value["expires_at"]))
    elif _plain(value):
        assert not valid


@FUZZ
@given(doc=job_offers(), url=_URIS, where=st.sampled_from(["callback", "declaration_url"]))
def test_uri_form_inside_rfc3986(impl, doc, url, where):
    """A URI the fast path proves is one jsonschema-rs's ``uri`` format accepts; one it accepts without
    userinfo or IP literal is proven."""
    if where == "callback":
        doc["callback"] = {"url": url}
    else:
        doc["from"] = {"type": "agent", "provenance_id": "provenance:domain:a.example", "declaration_url": url}
        doc["signature"] = "ed25519:AAAA"
    value = _wire(impl, doc)
    assert not _OFFER_SCHEMA.errors(dict(value, callback=None, **{"from": {"type": "human"}}))  # valid but for the URI
    proven = impl.offer_schema_instants(value) is not None
    if proven:
        assert _URI_FORMAT.is_valid(url)
    elif _plain_uri(url):
        assert not _URI_FORMAT.is_valid(url), url


_RECIPIENTS = st.sampled_from([None, frozenset(["provenance:github:me"]), frozenset(["provenance:domain:a", "x"])])
_LIMITS = st.one_of(st.integers(-10, 10**6), st.floats(allow_nan=True), st.sampled_from([300, 86_400, 1e-6, 0.5, True]))


@FUZZ
@given(doc=_OFFERS, recipients=_RECIPIENTS, skew=_LIMITS, max_lifetime=_LIMITS, same_to=st.booleans(),
       now_us=st.one_of(st.just(NOW_US), st.integers(NOW_US - 10**9, NOW_US + 10**11)))
def test_accepted_expiry_agrees_with_the_rules(impl, doc, recipients, skew, max_lifetime, same_to, now_us):
    """``offer_accepted_expiry`` never accepts what the schema, ``validate_offer(strict=True)`` or the
    recipient rule refuses, and accepts (with ``expires_at``'s instant) what they all accept."""
    if same_to and recipients and type(doc.get("to")) is dict:
        doc["to"]["provenance_id"] = sorted(recipients)[0]
    try:
        value = _wire(impl, doc)
    except ValueError:
        return
    expiry = impl.offer_accepted_expiry(value, now_us, skew, max_lifetime, recipients)
    schema_ok = not _OFFER_SCHEMA.errors(value)
    limits_readable = all(type(x) in (int, float) and not (type(x) is float and math.isnan(x)) for x in (skew, max_lifetime))
    accepted = (
        schema_ok
        and limits_readable
        and validate_offer(value, now=now_us / 1_000_000 if now_us % 1_000_000 else now_us // 1_000_000, strict=True,
                           skew=skew, max_lifetime=max_lifetime).valid
        and (recipients is None or value["to"]["provenance_id"] in recipients)
    )
    if expiry is not None:
        assert accepted
        assert expiry == timestamp_micros(value["expires_at"])
    elif _plain(value) and accepted:
        pytest.fail("a plain offer every judge accepts was not proven")


@FUZZ
@given(doc=_OFFERS, skew=_LIMITS, now_us=st.integers(NOW_US - 10**9, NOW_US + 10**11))
def test_twins_agree(twins, doc, skew, now_us):
    native, pure = twins
    try:
        value = _wire(pure, doc)
    except ValueError:
        return
    assert native.offer_schema_instants(value) == pure.offer_schema_instants(value)
    assert native.offer_accepted_expiry(value, now_us, skew, 86_400, None) == pure.offer_accepted_expiry(
        value, now_us, skew, 86_400, None)


@pytest.mark.parametrize("limit, expected", [
    (300, 300_000_000), (0.5, 500_000), (-1, -1_000_000), (1e-7, 0), (-1e-7, -1),
    (10**30, 1 << 62), (-(10**30), -(1 << 62)), (math.inf, 1 << 62), (-math.inf, -(1 << 62)),
    (4_611_686_018_427, 4_611_686_018_427_000_000), (4_611_686_018_428, 1 << 62),
])
def test_limits_in_microseconds(impl, limit, expected):
    """``skew``/``max_lifetime`` read as the largest whole microsecond count at most ``seconds * 1_000_000``:
    the comparison the rules make, exact on both twins."""
    value = _wire(impl, _offer())
    issued = timestamp_micros(value["issued_at"])
    expires = timestamp_micros(value["expires_at"])
    # issued_at - now == expected exactly: accepted at the bound, refused one microsecond past it
    if abs(expected) < 1 << 61 and expected >= 0:
        assert impl.offer_accepted_expiry(value, issued - expected, limit, 86_400, None) == expires
        if expected < expires - issued:
            assert impl.offer_accepted_expiry(value, issued - expected - 1, limit, 86_400, None) is None


@pytest.mark.parametrize("limit", [float("nan"), True, None, "300", 300.0j])
def test_unreadable_limits_are_not_proven(impl, limit):
    value = _wire(impl, _offer())
    assert impl.offer_accepted_expiry(value, NOW_US, limit, 86_400, None) is None
    assert impl.offer_accepted_expiry(value, NOW_US, 300, limit, None) is None


def _offer(**changes):
    offer = {
        "ajp": "0.1", "job_id": "job_offer_shape_0001",
        "from": {"type": "human", "id": "user_ada", "provenance_id": None, "declaration_url": None},
        "to": {"provenance_id": "provenance:github:me"},
        "task": {"type": "research", "instruction": "Find things."},
        "budget": {"max_usd": 0.5},
        "callback": {"url": "https://agents.example.org/api/jobs/1/result?x=1#top"},
        "issued_at": "2027-01-15T08:00:00Z", "expires_at": "2027-01-15T08:05:00Z",
    }
    offer.update(changes)
    offer["signature"] = sign(offer, secret=SECRET)
    return offer


def _now(offer):
    return offer["issued_at"].replace("08:00:00", "08:01:00")


def test_receive_takes_the_fast_path(core, monkeypatch):
    """A plain offer never reaches the schema engine on either twin (on main it always did)."""
    def engine(value):
        raise AssertionError("the schema engine ran")

    monkeypatch.setattr(_pipeline, "_ENGINE_VALID", engine)
    offer = _offer()
    receiver = ajp.Receiver(recipient="provenance:github:me", secret=SECRET, replay_guard=ajp.MemoryReplayGuard())
    received = receiver.receive(json.dumps(offer).encode(), now=_now(offer))
    assert received.offer.to_dict() == offer
    assert received.offer.job_id == "job_offer_shape_0001"


@pytest.mark.parametrize("changes", [
    {"callback": {"url": "https://user@agents.example.org/x"}},  # userinfo: valid, left to the engine
    {"callback": {"url": "http://[::1]:8080/x"}},  # an IP literal: valid, left to the engine
])
def test_valid_offers_outside_the_proven_form_are_still_accepted(core, changes):
    offer = _offer(**changes)
    assert core.offer_schema_instants(_wire(core, offer)) is None
    receiver = ajp.Receiver(recipient="provenance:github:me", secret=SECRET, replay_guard=ajp.MemoryReplayGuard())
    assert receiver.receive(json.dumps(offer).encode(), now=_now(offer)).offer.to_dict() == offer


@pytest.mark.parametrize("changes, error", [
    ({"callback": {"url": "https://a.example/{x}"}}, "ValidationError"),
    ({"budget": {"max_usd": -1}}, "ValidationError"),
    ({"to": {"provenance_id": "provenance:github:someone-else"}}, "RecipientMismatch"),
    ({"expires_at": "2027-01-15T07:59:00Z"}, "InvalidMessage"),
    ({"from": {"type": "agent", "provenance_id": "provenance:domain:a.example"}}, "InvalidMessage"),
])
def test_refusals_keep_their_errors(core, changes, error):
    """What the fast path does not prove goes to the schema engine and the rules: the same error as before."""
    offer = _offer(**changes)
    receiver = ajp.Receiver(recipient="provenance:github:me", secret=SECRET, replay_guard=ajp.MemoryReplayGuard())
    with pytest.raises(Exception) as caught:
        receiver.receive(json.dumps(offer).encode(), now=_now(offer))
    assert type(caught.value).__name__ == error


# -- new_slotted: the pipeline's objects filled in one call ---------------------------------------


def test_new_slotted_fills_a_frozen_slotted_object(impl):
    """The ReceivedOffer it builds equals the dataclass's own construction, field by field."""
    offer = ajp.JobOffer._wrap(_offer())
    built = impl.new_slotted(_pipeline.ReceivedOffer, _pipeline.RECEIVED_SLOTS, (offer, None, "hmac:x", b"d" * 32, True))
    assert type(built) is _pipeline.ReceivedOffer
    assert built == _pipeline.ReceivedOffer(offer, None, "hmac:x", b"d" * 32, True)
    envelope = impl.new_slotted(ajp.JobOffer, _pipeline.OFFER_SLOTS, (_offer(), None))
    assert envelope == offer and envelope.job_id == "job_offer_shape_0001"


class _Own:
    __slots__ = ("a",)

    def __new__(cls):
        return object.__new__(cls)


class _Slotted:
    __slots__ = ("a", "b")


@pytest.mark.parametrize("cls, members, values, error", [
    (_Own, (), (), TypeError),  # its own __new__: not built around it
    ("not a class", (), (), TypeError),
    (_Slotted, (_Slotted.__dict__["a"],), (1, 2), ValueError),
    (_Slotted, (property(),), (1,), AttributeError),  # a property without a setter refuses, as its __set__ does
    (_Slotted, (len,), (1,), TypeError),  # not a data descriptor
])
def test_new_slotted_refusals(impl, cls, members, values, error):
    with pytest.raises(error):
        impl.new_slotted(cls, members, values)
