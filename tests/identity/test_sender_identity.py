"""The sender identity flow (declaration -> location -> id -> pinned key -> offer), its refusal
codes, receive_offer with a declaration, and offers/results built as the reference SDK builds
them; on both core twins and both Ed25519 backends."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings

import ajpcore
from ajpcore import (
    BadSignature,
    Ed25519PrivateKey,
    InvalidMessage,
    KeyRotated,
    KeyUsageError,
    SenderIdentityError,
    ValidationError,
    ajp,
)
from ajpcore.provenance import MemoryKeyPins, sign_declaration, sign_notice
from ajpcore.strategies import json_values

PID = "provenance:domain:agent.example.com"
URL = "https://agent.example.com/.well-known/provenance.json"
RECEIVER = "provenance:domain:receiver.example"
NOW = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
OTHER = Ed25519PrivateKey.from_seed(bytes(range(1, 33)))
BACKENDS = [None, "pynacl"]


def declaration(key: Ed25519PrivateKey = KEY, **changes) -> dict:
    doc = {
        "provenance": "0.2",
        "name": "Research Agent",
        "description": "Finds and summarises papers.",
        "provenance_id": PID,
        "capabilities": ["read:web", "delegate:agents"],
        "constraints": ["no:pii"],
    }
    doc.update(changes)
    return sign_declaration(doc, key)


DECL = declaration()
DECL_BYTES = ajpcore.canonicalize(DECL)
# A URL that is the location of two ids (the host's and a path under it): the gate admits it for
# ALICE, the declaration served there is PID's, whose location it also is: the ids differ.
ALICE = "provenance:domain:agent.example.com/agents/alice"
ALICE_URL = "https://agent.example.com/agents/alice/provenance.json"


def offer(key: Ed25519PrivateKey = KEY, **sender) -> ajp.JobOffer:
    frm = {"type": "agent", "provenance_id": PID, "declaration_url": URL}
    frm.update(sender)
    return ajp.new_offer(
        sender=frm,
        to=RECEIVER,
        task={"type": "summarise", "instruction": "Summarise the three most cited papers."},
        now=NOW,
        private_key=key,
        job_id="job_example1",
    )


# -- the flow -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", ["bytes", "str", "value"])
def test_identity_from_the_declaration(core, backend, form):
    doc = {"bytes": DECL_BYTES, "str": DECL_BYTES.decode(), "value": DECL}[form]
    ident = ajp.verify_sender(offer(), doc, retrieved_from=URL, backend=backend)
    assert isinstance(ident, ajp.SenderIdentity)
    assert ident.provenance_id == PID
    assert ident.public_key == KEY.public_key and ident.fingerprint == KEY.public_key.fingerprint
    assert ident.declaration_digest == ajpcore.provenance.declaration_digest(DECL)
    assert ident.coverage == "declaration" and ident.retrieved_from == URL
    assert ident.capabilities == ("read:web", "delegate:agents") and ident.constraints == ("no:pii",)


def test_receive_offer_from_bytes_to_accepted_with_the_declared_key(core):
    got = ajp.receive_offer(offer().to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                            now=NOW, recipient=RECEIVER, declaration=DECL_BYTES, retrieved_from=URL)
    assert got.sender.provenance_id == PID and got.job_id == "job_example1"


def test_offer_signed_by_another_key_is_401_after_identity(core):
    forged = offer(key=OTHER)
    with pytest.raises(BadSignature) as exc:
        ajp.receive_offer(forged.to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                          now=NOW, recipient=RECEIVER, declaration=DECL_BYTES, retrieved_from=URL)
    assert exc.value.status == 401


def _code(call) -> str:
    with pytest.raises(SenderIdentityError) as exc:
        call()
    err = exc.value
    assert err.status == 403 and isinstance(err, ajpcore.AjpError)
    status, body = ajp.error_response(err)
    assert status == 403 and body.code == err.code
    return err.code


REFUSALS = {
    "SENDER_IDENTITY_FAILED": lambda: ajp.verify_sender(
        ajp.new_offer(sender={"type": "human", "id": "u1"}, to=RECEIVER, task={"type": "t", "instruction": "i"},
                      now=NOW, secret=b"s"), DECL, retrieved_from=URL),
    "NO_DECLARATION_URL": lambda: ajp.verify_sender(offer(declaration_url=None), DECL, retrieved_from=URL),
    "DECLARATION_LOCATION_MISMATCH": lambda: ajp.verify_sender(
        offer(declaration_url="https://evil.example.net/copied/provenance.json"), DECL,
        retrieved_from="https://evil.example.net/copied/provenance.json"),
    "DECLARATION_UNPARSEABLE": lambda: ajp.verify_sender(offer(), b'{"a": 1, "a": 2}', retrieved_from=URL),
    "NO_PUBLIC_KEY": lambda: ajp.verify_sender(offer(), {k: v for k, v in DECL.items() if k != "identity"}, retrieved_from=URL),
    "DECLARATION_INVALID": lambda: ajp.verify_sender(offer(), dict(DECL, constraints=[]), retrieved_from=URL),
    "DECLARATION_ID_MISMATCH": lambda: ajp.verify_sender(offer(provenance_id=ALICE, declaration_url=ALICE_URL), DECL,
                                                         retrieved_from=ALICE_URL),
    "KEY_ROTATED": lambda: ajp.verify_sender(offer(), DECL, retrieved_from=URL, pins=_pinned(OTHER)),
    "CAPABILITY_NOT_DECLARED": lambda: ajp.verify_sender(offer(), DECL, retrieved_from=URL, require_capabilities=["financial:transact"]),
}


def _pinned(key: Ed25519PrivateKey) -> MemoryKeyPins:
    pins = MemoryKeyPins()
    pins.check(PID, key.public_key.fingerprint, key.public_key)
    return pins


@pytest.mark.parametrize("code", sorted(REFUSALS))
def test_each_refusal_has_the_sdk_code(core, code):
    assert _code(REFUSALS[code]) == code


RECEIVE_CASES = {
    "NO_DECLARATION_URL": lambda: (offer(declaration_url=None), DECL, URL, {}),
    "DECLARATION_LOCATION_MISMATCH": lambda: (offer(), DECL, "https://agent.example.com/other.json", {}),
    "DECLARATION_UNPARSEABLE": lambda: (offer(), b"provenance: '0.2'\n", URL, {}),
    "NO_PUBLIC_KEY": lambda: (offer(), dict(DECL, identity={"algorithm": "ed25519"}), URL, {}),
    "DECLARATION_INVALID": lambda: (offer(), dict(DECL, capabilities=["everything"]), URL, {}),
    "DECLARATION_ID_MISMATCH": lambda: (offer(provenance_id=ALICE, declaration_url=ALICE_URL), DECL, ALICE_URL, {}),
    "KEY_ROTATED": lambda: (offer(), DECL, URL, {"pins": _pinned(OTHER)}),
    "CAPABILITY_NOT_DECLARED": lambda: (offer(), DECL, URL, {"require_capabilities": ("write:external",)}),
}


@pytest.mark.parametrize("code", sorted(RECEIVE_CASES))
def test_receive_offer_refuses_with_the_same_code(core, code):
    o, decl, where, more = RECEIVE_CASES[code]()
    assert _code(lambda: ajp.receive_offer(o.to_json(), now=NOW, recipient=RECEIVER, replay_guard=ajp.NO_REPLAY_GUARD,
                                           declaration=decl, retrieved_from=where, **more)) == code


def test_key_rotated_is_a_sender_identity_error(core):
    pins = _pinned(OTHER)
    with pytest.raises(KeyRotated) as exc:
        ajp.verify_sender(offer(), DECL, retrieved_from=URL, pins=pins)
    assert exc.value.code == "KEY_ROTATED" and exc.value.presented == KEY.public_key.fingerprint


def test_rotation_through_the_flow(core):
    pins = MemoryKeyPins()
    old = declaration(OTHER)
    ajp.verify_sender(offer(key=OTHER), old, retrieved_from=URL, pins=pins)  # first use pins OTHER
    with pytest.raises(KeyRotated):
        ajp.verify_sender(offer(), DECL, retrieved_from=URL, pins=pins)
    notice = sign_notice(
        {"notice": "0.1", "id": "n-1", "event": "key-rotation", "provenance_id": PID,
         "key_fingerprint": OTHER.public_key.fingerprint, "issued_at": "2026-03-05T09:00:00Z",
         "claims": {"new_public_key": KEY.public_key.to_string()}},
        OTHER,
    )
    pins.accept_rotation(notice)
    assert ajp.verify_sender(offer(), DECL, retrieved_from=URL, pins=pins).fingerprint == KEY.public_key.fingerprint
    with pytest.raises(KeyRotated):
        ajp.verify_sender(offer(key=OTHER), old, retrieved_from=URL, pins=pins)


def test_delegation_capability_of_the_specification(core):
    ident = ajp.verify_sender(offer(), DECL, retrieved_from=URL, require_capabilities=ajp.DELEGATION_CAPABILITY)
    assert "delegate:agents" in ident.capabilities
    without = declaration(capabilities=["read:web"])
    with pytest.raises(SenderIdentityError) as exc:
        ajp.verify_sender(offer(), without, retrieved_from=URL, require_capabilities=(ajp.DELEGATION_CAPABILITY,))
    assert exc.value.code == "CAPABILITY_NOT_DECLARED"


def test_capabilities_of_a_01_declaration_are_not_trusted(core):
    import base64

    decl01 = {"provenance": "0.1", "name": "n", "description": "d", "provenance_id": PID,
              "capabilities": ["delegate:agents"],
              "identity": {"public_key": KEY.public_key.to_string(), "algorithm": "ed25519"}}
    decl01["identity"]["signature"] = base64.b64encode(KEY.sign(f"{PID}:{KEY.public_key.to_string()}".encode())).decode()
    assert ajp.verify_sender(offer(), decl01, retrieved_from=URL).coverage == "identity"
    with pytest.raises(SenderIdentityError) as exc:
        ajp.verify_sender(offer(), decl01, retrieved_from=URL, require_capabilities="delegate:agents")
    assert exc.value.code == "CAPABILITY_NOT_DECLARED"


def test_receive_offer_keyword_rules(core):
    with pytest.raises(KeyUsageError):
        ajp.receive_offer(offer().to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                          now=NOW, recipient=RECEIVER, declaration=DECL, retrieved_from=URL, public_key=KEY.public_key)
    with pytest.raises(KeyUsageError):
        ajp.receive_offer(offer().to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                          now=NOW, recipient=RECEIVER, pins=MemoryKeyPins(), public_key=KEY.public_key)


def test_human_sender_keeps_the_hmac_path(core):
    human = ajp.new_offer(sender={"type": "human", "id": "u1"}, to=RECEIVER, task={"type": "t", "instruction": "i"},
                          now=NOW, secret=b"platform-secret")
    assert ajp.receive_offer(human.to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                             now=NOW, recipient=RECEIVER, secret=b"platform-secret").sender.type == "human"


@pytest.mark.parametrize(
    "doc",
    [None, 0, [], [DECL], "", b"", b"\xff", b"[" * 100_000, b'{"provenance": NaN}', "null", {"identity": []},
     {"identity": {"public_key": 5}}, dict(DECL, identity=dict(DECL["identity"], public_key="MCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")),
     dict(DECL, provenance="9.9"), dict(DECL, provenance_id=5), dict(DECL, capabilities="delegate:agents")],
    ids=repr,
)
def test_hostile_declarations_give_a_typed_refusal(core, doc):
    for backend in BACKENDS:
        with pytest.raises(SenderIdentityError):
            ajp.verify_sender(offer(), doc, retrieved_from=URL, backend=backend)


@settings(max_examples=60)
@given(doc=json_values(max_leaves=10))
def test_any_json_value_as_a_declaration_is_refused_with_a_code(doc):
    with pytest.raises(SenderIdentityError) as exc:
        ajp.verify_sender(offer(), doc, retrieved_from=URL)
    codes = {"NO_PUBLIC_KEY", "DECLARATION_INVALID", "DECLARATION_LOCATION_MISMATCH", "DECLARATION_ID_MISMATCH"}
    if isinstance(doc, str):  # a str is the fetched document's text
        codes.add("DECLARATION_UNPARSEABLE")
    assert exc.value.code in codes


@pytest.mark.parametrize("where", [None, 5, b"https://agent.example.com/.well-known/provenance.json", URL + " ", URL.upper()])
def test_retrieved_from_must_be_the_declaration_url(core, where):
    assert _code(lambda: ajp.verify_sender(offer(), DECL, retrieved_from=where)) == "DECLARATION_LOCATION_MISMATCH"


def test_offer_as_a_json_object(core):
    assert ajp.verify_sender(offer().to_dict(), DECL, retrieved_from=URL).provenance_id == PID
    with pytest.raises(ValidationError):
        ajp.verify_sender({"ajp": "0.1"}, DECL, retrieved_from=URL)


# -- building offers and results as the reference SDK does ---------------------------------


def test_new_offer_has_the_reference_client_defaults(core):
    got = ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=RECEIVER,
                        task={"type": "summarise", "instruction": "x"}, now=NOW, private_key=KEY).to_dict()
    assert got.pop("signature").startswith("ed25519:")
    job_id = got.pop("job_id")
    assert job_id.startswith("job_") and job_id != ajp.new_offer(
        sender={"type": "agent", "provenance_id": PID}, to=RECEIVER, task={"type": "t", "instruction": "i"},
        now=NOW, private_key=KEY).job_id
    assert got == {
        "ajp": "0.1",
        "parent_job_id": None,
        "from": {"type": "agent", "id": None, "provenance_id": PID, "declaration_url": URL},
        "to": {"provenance_id": RECEIVER},
        "task": {"type": "summarise", "instruction": "x", "input": {}, "output_format": "json"},
        "context": {"credentials": {}, "memory": [], "constraints": []},
        "budget": {"max_usd": 1.0, "max_seconds": 120, "max_llm_tokens": 10000},
        "callback": None,
        "issued_at": "2026-03-05T10:00:00.000Z",
        "expires_at": "2026-03-05T10:02:00.000Z",
    }
    assert dict(ajp.DEFAULT_BUDGET) == got["budget"]


def test_new_offer_keeps_what_is_given(core):
    got = ajp.new_offer(
        sender={"type": "orchestrator", "provenance_id": PID, "id": "orch-1"},
        to={"provenance_id": RECEIVER},
        task={"type": "t", "instruction": "i", "input": {"url": "https://x.example/r.pdf"}, "output_format": "markdown", "x-extra": [1]},
        budget={"max_usd": 0.25, "max_seconds": 60},
        context={"memory": ["m"]},
        callback={"url": "https://cb.example/r", "headers": {"Authorization": "Bearer t"}},
        parent_job_id="job_parent",
        now="2026-03-05T11:00:00.123456+01:00",
        private_key=KEY,
    )
    assert got.budget.to_dict() == {"max_usd": 0.25, "max_seconds": 60, "max_llm_tokens": 10000}
    assert got.context.to_dict() == {"memory": ["m"], "credentials": {}, "constraints": []}
    assert got.task.to_dict()["x-extra"] == [1] and got.task.output_format == "markdown"
    assert (got.issued_at, got.expires_at) == ("2026-03-05T10:00:00.123Z", "2026-03-05T10:01:00.123Z")
    assert got.parent_job_id == "job_parent" and got.callback.url == "https://cb.example/r" and got.sender.id == "orch-1"
    got.verify(public_key=KEY.public_key)


def test_new_offer_signs_with_the_scheme_of_the_sender_type(core):
    human = ajp.new_offer(sender={"type": "human", "id": "u"}, to=RECEIVER, task={"type": "t", "instruction": "i"},
                          now=NOW, secret="s3cret")
    assert human.signature.startswith("sha256:")
    assert ajp.receive_offer(human.to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                             now=NOW, recipient=RECEIVER, secret="s3cret") == human
    with pytest.raises(KeyUsageError):
        ajp.new_offer(sender={"type": "human"}, to=RECEIVER, task={"type": "t", "instruction": "i"}, now=NOW, private_key=KEY)
    with pytest.raises(KeyUsageError):
        ajp.new_offer(sender={"type": "agent", "provenance_id": PID}, to=RECEIVER, task={"type": "t", "instruction": "i"}, now=NOW, secret="s")
    with pytest.raises(KeyUsageError):
        ajp.new_offer(sender={"type": "agent", "provenance_id": PID}, to=RECEIVER, task={"type": "t", "instruction": "i"}, now=NOW)
    for pid in (None, ""):
        with pytest.raises(InvalidMessage, match="from.provenance_id required"):
            ajp.new_offer(sender={"type": "agent", "provenance_id": pid}, to=RECEIVER, task={"type": "t", "instruction": "i"}, now=NOW, private_key=KEY)


@pytest.mark.parametrize(
    "changes",
    [{"task": {"type": "t"}}, {"budget": {"max_usd": -1}}, {"to": 5}, {"sender": {"type": "robot"}},
     {"budget": {"max_seconds": "60"}}, {"callback": {"headers": {}}}, {"budget": {"max_seconds": 1e12}}],
    ids=repr,
)
def test_new_offer_refuses_what_the_schema_refuses(core, changes):
    args = dict(sender={"type": "agent", "provenance_id": PID}, to=RECEIVER, task={"type": "t", "instruction": "i"},
                now=NOW, private_key=KEY)
    args.update(changes)
    with pytest.raises((ValidationError, InvalidMessage)):
        ajp.new_offer(**args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_new_result_full_and_sdk(core, backend):
    full = ajp.new_result(job_id="job_example1", status="completed", output={"papers": []}, agent=PID, now=NOW,
                          private_key=KEY, constraints_asserted=["no:pii"])
    assert full.to_dict()["usage"] == {"llm_tokens": 0, "duration_seconds": 0, "cost_usd": 0}
    assert full.completed_at == "2026-03-05T10:00:00.000Z" and full.agent.provenance_id == PID
    assert full.verify(public_key=KEY.public_key, mode="full", backend=backend) == "full"
    sdk = ajp.new_result(job_id="job_example1", status="completed", output={"papers": []}, agent=PID, now=NOW,
                         private_key=KEY, constraints_asserted=["no:pii"], mode="sdk")
    view = sdk.verify(public_key=KEY.public_key, mode="sdk", backend=backend)
    assert view.mode == "sdk" and "/usage" in view.unsigned_members and "usage" not in view.to_dict()
    with pytest.raises(BadSignature):
        sdk.verify(public_key=KEY.public_key, mode="full", backend=backend)
    tampered = ajp.JobResult.from_dict(dict(full.to_dict(), usage={"llm_tokens": 1, "duration_seconds": 0, "cost_usd": 0}))
    with pytest.raises(BadSignature):
        tampered.verify(public_key=KEY.public_key, mode="full", backend=backend)
    hmac_result = ajp.new_result(job_id="job_00000001", status="failed", output=None, agent={"provenance_id": PID, "version": "1"},
                                 now=NOW, secret=b"k")
    assert hmac_result.verify(secret=b"k", mode="full") == "full"
    with pytest.raises(KeyUsageError):
        ajp.new_result(job_id="job_00000001", status="completed", output=1, agent=PID, now=NOW)
    with pytest.raises(ValueError):
        ajp.new_result(job_id="job_00000001", status="completed", output=1, agent=PID, now=NOW, private_key=KEY, mode="any")


@settings(max_examples=25)
@given(task_input=json_values(max_leaves=8))
def test_new_offer_round_trips_through_receive_offer(task_input):
    if not isinstance(task_input, dict) or not task_input:
        task_input = {"value": task_input}
    built = ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=RECEIVER,
                          task={"type": "t", "instruction": "i", "input": task_input}, now=NOW, private_key=KEY)
    got = ajp.receive_offer(built.to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                            now=NOW, recipient=RECEIVER, declaration=DECL_BYTES, retrieved_from=URL)
    assert got.to_json() == built.to_json()  # the same canonical bytes (ints past 2**53 are their double)


# -- the README's worked example and error table -------------------------------------------

README = Path(__file__).resolve().parent.parent.parent / "docs" / "provenance.md"  # worked example and identity codes (were in README.md)
EXAMPLE_DECLARATION = {
    "provenance": "0.2",
    "name": "Research Agent",
    "description": "Finds and summarises papers.",
    "provenance_id": PID,
    "capabilities": ["read:web", "delegate:agents"],
    "constraints": ["no:pii"],
}


def worked_example_block() -> str:
    decl = sign_declaration(EXAMPLE_DECLARATION, KEY)
    sent = offer()
    got = ajp.receive_offer(sent.to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                            now=NOW, recipient=RECEIVER, declaration=ajpcore.canonicalize(decl), retrieved_from=URL)
    ident = ajp.verify_sender(got, decl, retrieved_from=URL)
    return "\n".join(
        [
            "```text",
            f"agent public key:  {KEY.public_key.to_string()}",
            f"declaration, served at {URL}:",
            ajpcore.canonicalize(decl).decode("utf-8"),
            "offer, as received:",
            sent.to_json().decode("utf-8"),
            f"accepted `{got.job_id}` from `{ident.provenance_id}`, key fingerprint {ident.fingerprint}",
            "```",
        ]
    )


def _between(text: str, name: str) -> str:
    begin, end = f"<!-- {name}:begin -->\n", f"\n<!-- {name}:end -->"
    return text[text.index(begin) + len(begin) : text.index(end)]


def test_readme_documents_the_worked_example_this_code_computes(core):
    text = README.read_text("utf-8")
    assert _between(text, "identity-worked-example") == worked_example_block()
    assert "000102...1f" in text and bytes(range(32)).hex().startswith("000102")


SDK_CODES = ("DECLARATION_INVALID", "DECLARATION_LOCATION_MISMATCH", "DECLARATION_ID_MISMATCH", "KEY_ROTATED",
             "NO_PUBLIC_KEY", "NO_DECLARATION_URL", "SENDER_IDENTITY_FAILED", "DECLARATION_UNPARSEABLE")
DOCUMENTED_CLASSES = (
    ajpcore.SenderIdentityError, ajpcore.KeyRotated, ajpcore.KeyRotationRefused, ajpcore.KeyPinsCorrupt,
    ajpcore.TrustRefused, ajpcore.DecodeError, ajpcore.ValidationError, ajpcore.InvalidMessage,
    ajpcore.TimestampError, ajpcore.KeyFormatError, ajpcore.WeakKey, ajpcore.EncodeError, ajpcore.BadSignature,
    ajpcore.MalformedSignature, ajpcore.UnsupportedScheme, ajpcore.LegacySignature, ajpcore.BudgetRefused,
    ajpcore.ReplayedMessage, ajpcore.Busy, ajpcore.KeyUsageError, ajpcore.StateUnavailable,
)


def test_readme_error_table_gives_every_code_its_status():
    # The identity codes are a table of docs/provenance.md; the class table of docs/errors.md is
    # generated from ajpcore/errors.py by docs/_tools/sources.py when the site is built.
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("_docs_sources", README.parent / "_tools" / "sources.py")
    sources = sys.modules.setdefault("_docs_sources", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(sources)
    rows = {code: (int(cells[1]), cells[2]) for code, cells in sources.table_rows(_between(README.read_text("utf-8"), "identity-codes")).items()}
    for code in SDK_CODES + ("CAPABILITY_NOT_DECLARED", "KEY_ROTATION_REFUSED") + tuple(sorted(REFUSALS)):
        assert rows[code][0] == 403, code
    classes = sources.table_rows(sources.error_code_table())
    for cls in DOCUMENTED_CLASSES:
        assert (int(classes[cls.__name__][1]), classes[cls.__name__][2]) == (cls.status, f"`{cls.code}`"), cls
