"""The declaration URL gate on every path (issue 29, item 8), on both core twins.

``Receiver`` runs ``provenance.check_declaration_url`` before it fetches a declaration;
``receive_offer(declaration=...)`` and ``verify_sender`` used not to run it at all, so an intranet
name, ``metadata.google.internal``, ``*.local`` or ``*.test`` was refused (403) by the one and
accepted by the others.  Each URL here gets the same verdict and code on all three.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

import ajpcore
from ajpcore import Ed25519PrivateKey, SenderIdentityError, ajp
from ajpcore.provenance import sign_declaration

ME = "provenance:domain:receiver.example"
NOW = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
PATH = "/.well-known/provenance.json"

# (provenance_id, declaration_url): each is a location `match` for its id, signed by its owner,
# and each names a host a receiver must never be made to trust (or fetch) on a sender's word.
REFUSED = [
    ("provenance:domain:intranet", "https://intranet" + PATH),
    ("provenance:domain:metadata.google.internal", "https://metadata.google.internal" + PATH),
    ("provenance:domain:printer.local", "https://printer.local" + PATH),
    ("provenance:domain:agent.test", "https://agent.test" + PATH),
    ("provenance:domain:localhost", "https://localhost" + PATH),
    ("provenance:domain:agent.example.com", "http://agent.example.com" + PATH),
    ("provenance:domain:agent.example.com", "https://agent.example.com:8443" + PATH),
    ("provenance:domain:agent.example.com", "https://user@agent.example.com" + PATH),
]
ADMITTED = [("provenance:domain:agent.example.com", "https://agent.example.com" + PATH)]


def _declaration(pid: str) -> bytes:
    doc = {"provenance": "0.2", "name": "Agent", "description": "An agent.", "provenance_id": pid,
           "capabilities": ["delegate:agents"], "constraints": []}
    return ajpcore.canonicalize(sign_declaration(doc, KEY))


def _offer(pid: str, url: str) -> ajp.JobOffer:
    return ajp.new_offer(sender={"type": "agent", "provenance_id": pid, "declaration_url": url}, to=ME,
                         task={"type": "t", "instruction": "i"}, now=NOW, private_key=KEY)


def _verdicts(pid: str, url: str):
    """What each path answers for this sender: ``"ok"`` or the ``SenderIdentityError`` code."""
    offer, declaration = _offer(pid, url), _declaration(pid)
    verdicts = {}
    try:
        ajp.receive_offer(offer.to_json(), now=NOW, recipient=ME, replay_guard=ajp.NO_REPLAY_GUARD,
                          declaration=declaration, retrieved_from=url)
        verdicts["receive_offer"] = "ok"
    except SenderIdentityError as exc:
        verdicts["receive_offer"] = exc.code
    try:
        ajp.verify_sender(offer, declaration, retrieved_from=url)
        verdicts["verify_sender"] = "ok"
    except SenderIdentityError as exc:
        verdicts["verify_sender"] = exc.code
    fetched = []

    def resolver(provenance_id: str, declaration_url: str):
        fetched.append(declaration_url)
        return declaration, declaration_url

    receiver = ajp.Receiver(recipient=ME, declarations=resolver, replay_guard=ajp.NO_REPLAY_GUARD)
    answer = receiver.answer_offer(offer.to_json(), now=NOW)
    verdicts["Receiver"] = "ok" if answer.accepted else json.loads(answer.body)["code"]
    return verdicts, fetched


@pytest.mark.parametrize("pid, url", REFUSED)
def test_a_refused_url_is_refused_with_one_code_on_every_path(core, pid, url):
    verdicts, fetched = _verdicts(pid, url)
    codes = set(verdicts.values())
    assert len(codes) == 1 and "ok" not in codes, verdicts
    assert codes <= {"DECLARATION_URL_REFUSED", "DECLARATION_LOCATION_MISMATCH", "PROVENANCE_ID_INVALID",
                     "PROVENANCE_ID_NOT_CANONICAL"}
    assert fetched == []  # the Receiver never fetched it


@pytest.mark.parametrize("pid, url", ADMITTED)
def test_a_public_url_is_admitted_on_every_path(core, pid, url):
    verdicts, fetched = _verdicts(pid, url)
    assert verdicts == {"receive_offer": "ok", "verify_sender": "ok", "Receiver": "ok"}
    assert fetched == [url]


def test_the_gate_runs_before_the_retrieved_from_check(core):
    """A gate refusal wins over a wrong ``retrieved_from``: the order the Receiver refuses in."""
    pid, url = REFUSED[1]
    offer, declaration = _offer(pid, url), _declaration(pid)
    with pytest.raises(SenderIdentityError) as exc:
        ajp.verify_sender(offer, declaration, retrieved_from="https://elsewhere.example" + PATH)
    assert exc.value.code == "DECLARATION_URL_REFUSED"
