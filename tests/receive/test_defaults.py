"""Receiver defaults a deployer cannot get wrong (issue 31, item 1), on both core twins.

A replay guard is required (``ajp.NO_REPLAY_GUARD`` the explicit opt-out); bodies over the bound are
413 before any decoding; the Content-Type rule is 415; a fetch failure's text stays in the host's log;
a wrong ``now`` is the host's ``TypeError``/``ValueError``, never an answer; every refusal body is the
specification's ``{error, reason}``; ``ReplayedMessage.job_id`` names the job.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
from datetime import datetime, timezone

import pytest

import ajpcore
from ajpcore import (
    AjpError,
    DeclarationUnreachable,
    Ed25519PrivateKey,
    PayloadTooLarge,
    ReplayedMessage,
    UnsupportedMediaType,
    ajp,
)
from ajpcore.provenance import sign_declaration

PID = "provenance:domain:agent.example.com"
URL = "https://agent.example.com/.well-known/provenance.json"
ME = "provenance:domain:receiver.example"
NOW = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
SECRET = b"platform-secret"
TASK = {"type": "summarise", "instruction": "Summarise the three most cited papers."}
DECL = ajpcore.canonicalize(sign_declaration(
    {"provenance": "0.2", "name": "Research Agent", "description": "Finds papers.", "provenance_id": PID,
     "capabilities": ["delegate:agents"], "constraints": []}, KEY))


def human(job_id: str = "job_human_0001", **task) -> bytes:
    return ajp.new_offer(sender={"type": "human", "id": "u1"}, to=ME, task=dict(TASK, **task), now=NOW,
                         secret=SECRET, job_id=job_id).to_json()


def agent(job_id: str = "job_agent_0001") -> bytes:
    return ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=ME, task=TASK,
                         now=NOW, private_key=KEY, job_id=job_id).to_json()


def receiver(**kw) -> ajp.Receiver:
    kw.setdefault("recipient", ME)
    kw.setdefault("secret", SECRET)
    kw.setdefault("replay_guard", ajp.MemoryReplayGuard())
    return ajp.Receiver(**kw)


def body_of(answer) -> dict:
    return json.loads(answer.body)


# -- replay_guard is required -----------------------------------------------------------------------


def test_replay_guard_is_required_and_none_is_refused():
    with pytest.raises(TypeError, match="replay_guard"):
        ajp.Receiver(recipient=ME, secret=SECRET)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="replay_guard"):
        ajp.receive_offer(human(), now=NOW, recipient=ME, secret=SECRET)  # type: ignore[call-arg]
    for face in (lambda: ajp.Receiver(recipient=ME, secret=SECRET, replay_guard=None),  # type: ignore[arg-type]
                 lambda: ajp.receive_offer(human(), now=NOW, recipient=ME, secret=SECRET,
                                           replay_guard=None)):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="NO_REPLAY_GUARD") as exc:
            face()
        assert not isinstance(exc.value, AjpError)  # a host's configuration error, never an answer
    with pytest.raises(TypeError, match="admit"):
        ajp.Receiver(recipient=ME, secret=SECRET, replay_guard=object())  # type: ignore[arg-type]


def test_no_replay_guard_is_the_explicit_opt_out(core):
    assert repr(ajp.NO_REPLAY_GUARD) == "ajp.NO_REPLAY_GUARD"
    assert pickle.loads(pickle.dumps(ajp.NO_REPLAY_GUARD)) is ajp.NO_REPLAY_GUARD
    r = receiver(replay_guard=ajp.NO_REPLAY_GUARD)
    assert r.replay_guard is ajp.NO_REPLAY_GUARD
    data = human()
    assert r.answer_offer(data, now=NOW).accepted and r.answer_offer(data, now=NOW).accepted  # it says so
    for _ in range(2):
        ajp.receive_offer(data, now=NOW, recipient=ME, secret=SECRET, replay_guard=ajp.NO_REPLAY_GUARD)
    guarded = receiver()
    assert guarded.answer_offer(data, now=NOW).accepted and guarded.answer_offer(data, now=NOW).duplicate


# -- the body bound -------------------------------------------------------------------------------


def test_the_bound_is_1_mib_by_default_and_an_attribute(core):
    assert ajp.DEFAULT_MAX_BODY_BYTES == 1 << 20 == receiver().max_body_bytes
    assert receiver(max_body_bytes=4096).max_body_bytes == 4096
    for wrong, error in ((0, ValueError), (-1, ValueError), (True, TypeError), ("1", TypeError), (None, TypeError)):
        with pytest.raises(error):
            receiver(max_body_bytes=wrong)
        with pytest.raises(error):
            ajp.receive_offer(human(), now=NOW, recipient=ME, secret=SECRET, replay_guard=ajp.NO_REPLAY_GUARD,
                              max_body_bytes=wrong)


def test_a_body_over_the_bound_is_413_before_any_decoding(core):
    r = receiver()
    limit = r.max_body_bytes
    # Not JSON at all: a decoder would answer 400; the bound answers first.
    for over in (b"x" * (limit + 1), bytearray(b"[" * (limit + 1)), memoryview(b"{" * (5 * limit)), "x" * (limit + 1)):
        answer = r.answer_offer(over, now=NOW)
        body = body_of(answer)
        assert answer.status == 413 and not answer.accepted, type(over)
        assert body["code"] == "PAYLOAD_TOO_LARGE" and body["error"] == "Payload too large"
        assert str(limit) in body["reason"] and "\n" not in body["reason"]
        assert ajp.ErrorBody.from_json(answer.body).code == "PAYLOAD_TOO_LARGE"
        with pytest.raises(PayloadTooLarge) as exc:
            r.receive(over, now=NOW)
        assert exc.value.status == 413 and exc.value.limit == limit
    # the bound counts UTF-8 bytes: 300,000 three-byte characters are 900,000 bytes (under); 400,000 are over
    padded = human(instruction="€" * 300_000).decode("utf-8")
    assert len(padded.encode()) < limit and r.answer_offer(padded, now=NOW).accepted
    big = human(job_id="job_human_0002", instruction="€" * 400_000).decode("utf-8")
    assert len(big) < limit < len(big.encode())
    with pytest.raises(PayloadTooLarge) as exc:
        r.receive(big, now=NOW)
    assert exc.value.size == len(big.encode())


def test_a_body_at_the_bound_is_read(core):
    data = human()
    r = receiver(max_body_bytes=len(data))
    assert r.answer_offer(data, now=NOW).accepted
    tight = receiver(max_body_bytes=len(data) - 1)
    assert tight.answer_offer(data, now=NOW).status == 413
    with pytest.raises(PayloadTooLarge):
        ajp.receive_offer(data, now=NOW, recipient=ME, secret=SECRET, replay_guard=ajp.NO_REPLAY_GUARD,
                          max_body_bytes=len(data) - 1)


# -- Content-Type ---------------------------------------------------------------------------------

JSON_TYPES = ["application/json", "Application/JSON", "application/json; charset=utf-8",
              "application/json;charset=UTF-8", 'application/json; charset="utf-8"', " application/json ",
              "application/json\t;\tcharset=utf-8"]
NOT_JSON = [None, "", "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=xyz", "application/json; charset=latin-1", "application/json; charset=utf8",
            "application/json; foo=bar", "application/json;", "application/jsonx", "application/json-patch+json",
            "application/json, text/plain", "*/*", "application/json; charset=utf-8; charset=utf-16"]


@pytest.mark.parametrize("value", JSON_TYPES)
def test_json_content_types_pass(value):
    assert ajp.check_content_type(value) is None


@pytest.mark.parametrize("value", NOT_JSON)
def test_other_content_types_are_415(core, value):
    with pytest.raises(UnsupportedMediaType) as exc:
        ajp.check_content_type(value)
    assert exc.value.status == 415 and exc.value.code == "UNSUPPORTED_MEDIA_TYPE" and exc.value.content_type == value
    answer = receiver().answer_offer(human(), now=NOW, content_type=value)
    body = body_of(answer)
    assert answer.status == 415 and not answer.accepted
    assert body["error"] == "Unsupported media type" and body["code"] == "UNSUPPORTED_MEDIA_TYPE" and body["reason"]


def test_content_type_is_checked_before_the_body_and_only_when_given(core):
    r = receiver()
    assert r.answer_offer(b"x" * (2 << 20), now=NOW, content_type="text/plain").status == 415
    assert r.answer_offer(human(), now=NOW, content_type="application/json").accepted
    assert r.answer_offer(human(job_id="job_human_0002"), now=NOW).accepted  # left out: the host checked it
    with pytest.raises(TypeError):
        ajp.check_content_type(b"application/json")  # type: ignore[arg-type]


# -- a fetch failure's text stays with the host ----------------------------------------------------

LEAK = "[Errno 111] connect to 10.1.2.3:443 (internal-proxy.corp.local)"


class FailingResolver:
    blocking = False

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __call__(self, provenance_id: str, url: str):
        raise self.exc


@pytest.mark.parametrize("failure", [ConnectionRefusedError(111, LEAK), TimeoutError(LEAK), DeclarationUnreachable(LEAK)])
def test_a_fetch_failure_is_answered_with_a_fixed_text_and_logged(core, caplog, failure):
    r = receiver(declarations=FailingResolver(failure))
    with caplog.at_level(logging.WARNING, logger="ajpcore.ajp"):
        answer = r.answer_offer(agent(), now=NOW)
        answer_async = asyncio.run(r.answer_offer_async(agent(), now=NOW))
    for got in (answer, answer_async):
        body = body_of(got)
        assert got.status == 403 and body["code"] == "DECLARATION_UNREACHABLE"
        assert "10.1.2.3" not in got.body.decode() and "corp.local" not in got.body.decode()
        assert body["reason"] == "the sender's declaration could not be fetched from its declaration_url; retry later"
    if not isinstance(failure, DeclarationUnreachable):  # the host's own exception: it has its text already
        logged = [rec for rec in caplog.records if rec.name == "ajpcore.ajp"]
        assert len(logged) == 2 and all(LEAK in rec.getMessage() and URL in rec.getMessage() for rec in logged)
        with pytest.raises(DeclarationUnreachable) as exc:
            r.receive(agent(), now=NOW)
        assert LEAK not in str(exc.value)
    status, body = ajp.error_response(DeclarationUnreachable(LEAK))
    assert status == 403 and LEAK not in body.to_json().decode()


# -- now is the host's input ----------------------------------------------------------------------

BAD_NOWS = [(None, TypeError), (True, TypeError), (object(), TypeError), (b"2026-03-05T10:00:00Z", TypeError),
            ("yesterday", ValueError), ("2026-03-05T10:00:00", ValueError), (datetime(2026, 3, 5, 10, 0), ValueError),
            (float("nan"), ValueError), (float("inf"), ValueError)]


@pytest.mark.parametrize("now, error", BAD_NOWS)
def test_a_wrong_now_is_the_hosts_error_never_an_answer(core, now, error):
    r = receiver(declarations=lambda pid, url: (DECL, url))
    for data in (human(), agent(), b"not json", b"x" * (2 << 20)):  # whatever the body: the host's bug comes first
        for face in (lambda: r.answer_offer(data, now=now), lambda: r.receive(data, now=now),
                     lambda: asyncio.run(r.answer_offer_async(data, now=now)),
                     lambda: asyncio.run(r.receive_async(data, now=now)),
                     lambda: ajp.receive_offer(data, now=now, recipient=ME, secret=SECRET,
                                               replay_guard=ajp.NO_REPLAY_GUARD)):
            with pytest.raises(error) as exc:
                face()
            assert not isinstance(exc.value, AjpError), exc.value
            assert "now" in str(exc.value)


# -- every refusal body is {error, reason} ---------------------------------------------------------


def _refusals():
    """One answer of each refusal a receiver gives, as (what, HttpAnswer)."""
    class Full:
        blocking = False

        def admit(self, *args, **kwargs):
            raise ajpcore.Busy("this sender's quota is full", retry_after=30)

    class Down:
        blocking = False

        def admit(self, *args, **kwargs):
            raise ajpcore.StateUnavailable("redis at 10.0.0.5:6379 refused the connection", retry_after=2)

    r = receiver()
    accepted = human()
    r.answer_offer(accepted, now=NOW)
    other = ajp.new_offer(sender={"type": "human", "id": "u1"}, to=ME, task=dict(TASK, type="other"), now=NOW,
                          secret=SECRET, job_id="job_human_0001").to_json()
    many = json.loads(human())
    for member in ("task", "budget", "issued_at"):
        del many[member]
    yield "decode", r.answer_offer(b"{,", now=NOW)
    yield "schema", r.answer_offer(json.dumps(many).encode(), now=NOW)
    yield "rules", r.answer_offer(human(job_id="job_human_0009"), now="2026-03-06T10:00:00Z")
    yield "signature", r.answer_offer(human(job_id="job_human_0003").replace(b'"u1"', b'"u2"'), now=NOW)
    yield "recipient", receiver(recipient="provenance:domain:else.example").answer_offer(human(), now=NOW)
    yield "sender", receiver(secret=None, declarations=None).answer_offer(agent(), now=NOW)
    yield "replay", r.answer_offer(other, now=NOW)
    yield "too large", r.answer_offer(b" " * (2 << 20), now=NOW)
    yield "media type", r.answer_offer(human(), now=NOW, content_type="text/plain")
    yield "busy", receiver(replay_guard=Full()).answer_offer(human(), now=NOW)
    yield "state", receiver(replay_guard=Down()).answer_offer(human(), now=NOW)
    yield "not found", r.answer_status("job_nope", None)
    yield "bad ack", r.answer_ack("job_human_0001", b'{"received": "yes"}', known=True)
    yield "internal", ajp.refusal_answer(RuntimeError("boom at /srv/app.py"))  # type: ignore[arg-type]


def test_every_refusal_body_has_error_and_a_one_line_reason(core):
    seen = set()
    for what, answer in _refusals():
        body = body_of(answer)
        seen.add(answer.status)
        assert answer.status >= 400, what
        assert isinstance(body["error"], str) and body["error"], what
        assert isinstance(body["reason"], str) and body["reason"].strip(), what
        assert "\n" not in body["reason"] and len(body["reason"]) <= 300, what
        assert ajp.ErrorBody.from_json(answer.body).reason == body["reason"]  # the shipped schema agrees
        if answer.status in (429, 503):
            assert answer.headers["retry-after"] == str(body["retry_after"])
        assert "10.0.0.5" not in body["reason"] and "/srv/app.py" not in body["reason"], what
    assert seen == {400, 401, 403, 404, 409, 413, 415, 429, 500, 503}


def test_a_400_reason_is_its_first_problem_and_a_count(core):
    data = json.loads(human())
    for member in ("task", "budget", "issued_at"):
        del data[member]
    answer = receiver().answer_offer(json.dumps(data).encode(), now=NOW)
    body = body_of(answer)
    assert answer.status == 400 and len(body["errors"]) == 3
    assert body["reason"] == f"{body['errors'][0]} (and 2 more problems)"
    long = ajpcore.InvalidMessage(["x" * 1000, "y"])
    reason = ajp.error_response(long)[1].reason
    assert reason is not None and len(reason) == 300 and reason.endswith("(and 1 more problem)")


# -- ReplayedMessage.job_id -----------------------------------------------------------------------


def test_a_replay_names_its_job(core, tmp_path):
    data = human(job_id="job_named_0001")
    other = human(job_id="job_named_0001", type="another")
    guard = ajp.MemoryReplayGuard()
    ajp.receive_offer(data, now=NOW, recipient=ME, secret=SECRET, replay_guard=guard)
    with pytest.raises(ReplayedMessage) as exc:
        ajp.receive_offer(other, now=NOW, recipient=ME, secret=SECRET, replay_guard=guard)
    assert exc.value.job_id == "job_named_0001" and not exc.value.same_body
    again = pickle.loads(pickle.dumps(exc.value))
    assert (again.job_id, again.same_body, str(again)) == ("job_named_0001", False, str(exc.value))
    r = receiver()
    r.receive(data, now=NOW)
    with pytest.raises(ReplayedMessage) as exc:
        r.receive(data, now=NOW)
    assert exc.value.job_id == "job_named_0001" and exc.value.same_body
    # an asyncio guard's replay, raised when awaited
    async_guard = ajp.AsyncSQLiteReplayGuard(str(tmp_path / "replay.db"))
    ra = receiver(replay_guard=async_guard)

    async def twice():
        await ra.receive_async(data, now=NOW)
        await ra.receive_async(data, now=NOW)

    with pytest.raises(ReplayedMessage) as exc:
        asyncio.run(twice())
    assert exc.value.job_id == "job_named_0001"
    assert ReplayedMessage("x").job_id is None  # a guard of the host's that does not name it: the receive path does
