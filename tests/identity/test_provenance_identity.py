"""One id, one spelling (issue 20 §1) and the declaration URL gate (issue 21 §3).

- ``canonical_provenance_id``: the one spelling of each id, folded as its platform folds it.
- ``check_location`` answers ``match`` only for an id in that spelling, compares paths
  case-sensitively except where the platform folds them, and never for an IP literal or
  localhost.
- ``check_declaration_url``: the gate a receiver runs before fetching ``from.declaration_url``.
- End to end, through ``verify_sender`` and ``receive_offer`` on both core twins: after the
  owner's key is pinned, a respelled id signed with another key is refused, never a second
  identity beside the pinned one.
"""

from __future__ import annotations

import inspect
from datetime import datetime, timezone

import pytest

import ajpcore
from ajpcore import Ed25519PrivateKey, KeyRotated, SenderIdentityError, ajp
from ajpcore.provenance import (
    MemoryKeyPins,
    canonical_provenance_id,
    check_declaration_url,
    check_location,
    require_canonical_provenance_id,
    sign_declaration,
    verify_declaration,
)

# -- the canonical spelling ---------------------------------------------------------------

CANONICAL = [
    ("provenance:domain:agent.example.com", "provenance:domain:agent.example.com"),
    ("provenance:domain:AGENT.example.com", "provenance:domain:agent.example.com"),
    ("provenance:DOMAIN:agent.example.com", "provenance:domain:agent.example.com"),
    ("PROVENANCE:Domain:Agent.Example.COM", "provenance:domain:agent.example.com"),
    ("provenance:domain:agent.example.com/", "provenance:domain:agent.example.com"),
    ("provenance:domain:agent.example.com.", "provenance:domain:agent.example.com"),
    ("provenance:domain://agent.example.com//", "provenance:domain:agent.example.com"),
    ("provenance:domain:example.com/agents/Alice", "provenance:domain:example.com/agents/Alice"),  # paths keep case
    ("provenance:domain:example.com/agents//alice/", "provenance:domain:example.com/agents/alice"),
    ("provenance:domain:xn--bcher-kva.example", "provenance:domain:xn--bcher-kva.example"),
    ("provenance:github:alice/agent", "provenance:github:alice/agent"),
    ("provenance:github:Alice/Research-Agent", "provenance:github:alice/research-agent"),
    ("provenance:GitHub:alice/agent/", "provenance:github:alice/agent"),
    ("provenance:huggingface:Alice/Agent", "provenance:huggingface:alice/agent"),
    ("provenance:npm:left-pad", "provenance:npm:left-pad"),
    ("provenance:npm:JSONStream", "provenance:npm:JSONStream"),  # npm is case-sensitive
    ("provenance:npm:@acme/agent", "provenance:npm:@acme/agent"),
    ("provenance:pypi:agent-kit", "provenance:pypi:agent-kit"),
    ("provenance:pypi:Agent_Kit", "provenance:pypi:agent-kit"),  # PEP 503
    ("provenance:pypi:agent.._-kit", "provenance:pypi:agent-kit"),
    ("provenance:clawmarket:Listing-42", "provenance:clawmarket:Listing-42"),
]


@pytest.mark.parametrize("given, canonical", CANONICAL)
def test_canonical_spelling(given, canonical):
    assert canonical_provenance_id(given) == canonical
    assert canonical_provenance_id(canonical) == canonical  # idempotent
    assert require_canonical_provenance_id(canonical) == canonical
    if given != canonical:
        with pytest.raises(SenderIdentityError) as exc:
            require_canonical_provenance_id(given)
        assert exc.value.status == 403 and exc.value.code == "PROVENANCE_ID_NOT_CANONICAL"
        assert f"`{canonical}`" in str(exc.value)


NOT_IDS = [
    None, 5, b"provenance:domain:agent.example.com", "", "provenance:domain:", "provenance:domain:/",
    " provenance:domain:agent.example.com", "provenance:domain:agent.example.com ", "provenance::x",
    "provenance:domain:169.254.169.254", "provenance:domain:2852039166", "provenance:domain:0x7f.1",
    "provenance:domain:127.1", "provenance:domain:0x7f", "provenance:domain:[::1]", "provenance:domain:agent.example.com:443",
    "provenance:domain:exa%6dple.com", "provenance:domain:bücher.example", "provenance:domain:-a.example",
    "provenance:domain:a..example", "provenance:domain:example.com/a%2Fb", "provenance:domain:example.com/../x",
    "provenance:domain:example.com/a b", "provenance:github:alice", "provenance:github:alice/agent/extra",
    "provenance:github:alice/..", "provenance:github:al ice/agent", "provenance:huggingface:alice",
    "provenance:npm:@acme", "provenance:npm:a/b", "provenance:npm:a b", "provenance:pypi:-agent",
    "provenance:pypi:a/b", "provenance:other:a%20b", "provenance:other:..",
]


@pytest.mark.parametrize("value", NOT_IDS)
def test_what_is_not_an_id(value):
    with pytest.raises(SenderIdentityError) as exc:
        canonical_provenance_id(value)
    assert exc.value.status == 403 and exc.value.code == "PROVENANCE_ID_INVALID"
    with pytest.raises(SenderIdentityError):
        require_canonical_provenance_id(value)
    assert check_location(value, "https://agent.example.com/.well-known/provenance.json") == "unchecked"


# -- the location rule --------------------------------------------------------------------

HOME = "https://agent.example.com/.well-known/provenance.json"

LOCATIONS = [
    # Respellings of a matching id are never a match.
    ("provenance:domain:agent.example.com", HOME, "match"),
    ("provenance:domain:AGENT.example.com", HOME, "unchecked"),
    ("provenance:DOMAIN:agent.example.com", HOME, "unchecked"),
    ("Provenance:domain:agent.example.com", HOME, "unchecked"),
    ("provenance:domain:agent.example.com/", HOME, "unchecked"),
    ("provenance:domain:agent.example.com.", HOME, "unchecked"),
    ("provenance:github:Alice/Agent", "https://github.com/alice/agent", "unchecked"),
    ("provenance:pypi:Agent_Kit", "https://pypi.org/project/agent-kit/", "unchecked"),
    # The URL's scheme and host fold (RFC 3986 §6.2.2.1); its path does not.
    ("provenance:domain:agent.example.com", "HTTPS://AGENT.Example.COM/.well-known/provenance.json", "match"),
    ("provenance:domain:example.com/agents/alice", "https://example.com/agents/alice/.well-known/provenance.json", "match"),
    ("provenance:domain:example.com/agents/alice", "https://example.com/agents/ALICE/.well-known/provenance.json", "mismatch"),
    ("provenance:domain:example.com/agents/alice", "https://example.com/Agents/alice/x.json", "mismatch"),
    ("provenance:domain:example.com/agents/Alice", "https://example.com/agents/Alice/x.json", "match"),
    ("provenance:domain:example.com/agents/Alice", "https://example.com/agents/%41lice/x.json", "match"),  # decoded
    ("provenance:domain:example.com/agents/alice", "https://example.com/agents//alice/x.json", "unchecked"),
    ("provenance:domain:example.com/agents/alice", "https://example.com//agents/alice/x.json", "unchecked"),
    # GitHub and Hugging Face fold owner and name; npm folds nothing; PyPI normalizes (PEP 503).
    ("provenance:github:alice/agent", "https://github.com/ALICE/Agent/blob/main/PROVENANCE.yml", "match"),
    ("provenance:github:alice/agent", "https://raw.githubusercontent.com/Alice/AGENT/main/PROVENANCE.yml", "match"),
    ("provenance:github:alice/agent", "https://api.github.com/repos/Alice/Agent/contents/PROVENANCE.yml", "match"),
    ("provenance:huggingface:alice/agent", "https://huggingface.co/spaces/Alice/Agent/raw/main/PROVENANCE.yml", "match"),
    ("provenance:npm:jsonstream", "https://registry.npmjs.org/JSONStream", "mismatch"),
    ("provenance:npm:JSONStream", "https://registry.npmjs.org/JSONStream", "match"),
    ("provenance:npm:JSONStream", "https://www.npmjs.com/package/jsonstream", "mismatch"),
    # An encoded separator is never a match (issue 29 §1), even where the registry would read it.
    ("provenance:npm:@acme/agent", "https://registry.npmjs.org/@acme%2Fagent", "unchecked"),
    ("provenance:npm:@acme/agent", "https://registry.npmjs.org/@acme/agent", "match"),
    ("provenance:npm:@acme/agent", "https://registry.npmjs.org/@ACME/agent", "mismatch"),
    ("provenance:pypi:agent-kit", "https://pypi.org/project/Agent_Kit/", "match"),
    ("provenance:pypi:agent-kit", "https://pypi.org/project/agent.kit", "match"),
    ("provenance:pypi:agent-kit", "https://pypi.org/project/agentkit/", "mismatch"),
    # IP literals and localhost are never anyone's home.
    ("provenance:domain:localhost", "https://localhost/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:agent.localhost", "https://agent.localhost/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:example.com", "https://[::1]/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:example.com", "https://2852039166/.well-known/provenance.json", "unchecked"),
    ("provenance:domain:example.com", "https://0x7f.1/x", "unchecked"),
    ("provenance:domain:example.com", "https://169.254.169.254/latest/meta-data", "unchecked"),
    ("provenance:domain:169.254.169.254", "https://169.254.169.254/latest/meta-data", "unchecked"),
    ("provenance:domain:2852039166", "https://2852039166/x", "unchecked"),
    ("provenance:domain:0x7f.1", "https://0x7f.1/x", "unchecked"),
    ("provenance:domain:0177.0.0.1", "https://0177.0.0.1/x", "unchecked"),
]


@pytest.mark.parametrize("provenance_id, url, expected", LOCATIONS)
def test_location_rule(provenance_id, url, expected):
    assert check_location(provenance_id, url) == expected


# -- the declaration URL gate --------------------------------------------------------------

GATE_PASSES = [
    ("https://agent.example.com/.well-known/provenance.json", "provenance:domain:agent.example.com"),
    ("https://agent.example.com:443/.well-known/provenance.json", "provenance:domain:agent.example.com"),
    ("HTTPS://Agent.Example.com/.well-known/provenance.json", "provenance:domain:agent.example.com"),
    ("https://agent.example.com/.well-known/provenance.json?v=2", "provenance:domain:agent.example.com"),
    ("https://example.com/agents/alice/.well-known/provenance.json", "provenance:domain:example.com/agents/alice"),
    ("https://raw.githubusercontent.com/alice/agent/HEAD/PROVENANCE.yml", "provenance:github:alice/agent"),
    ("https://pypi.org/project/agent-kit/", "provenance:pypi:agent-kit"),
]


@pytest.mark.parametrize("url, provenance_id", GATE_PASSES)
def test_gate_passes(url, provenance_id):
    assert check_declaration_url(url, provenance_id) is None


AGENT = "provenance:domain:agent.example.com"
GATE_REFUSALS = [
    # (url, provenance_id, code)
    ("http://agent.example.com/.well-known/provenance.json", AGENT, "DECLARATION_URL_REFUSED"),
    ("ftp://agent.example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("//agent.example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https:agent.example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com:8443/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com:0443/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com:/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://user@agent.example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://user:pw@agent.example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com@evil.example.org/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com/x#frag", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com/x#", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com./x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent..example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent%2eexample.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://%61gent.example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com\\@evil.org/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com/x y", AGENT, "DECLARATION_URL_REFUSED"),
    (" https://agent.example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com/x\n", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://bücher.example.com/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https:///x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://", AGENT, "DECLARATION_URL_REFUSED"),
    (5, AGENT, "DECLARATION_URL_REFUSED"),
    (None, AGENT, "DECLARATION_URL_REFUSED"),
    # IP literals, in every form a URL parser reads as one.
    ("https://169.254.169.254/latest/meta-data", "provenance:domain:example.com", "DECLARATION_URL_REFUSED"),
    ("https://127.0.0.1/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://[::1]/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://[::ffff:169.254.169.254]/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://2852039166/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://0x7f.1/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://0x7f000001/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://0177.0.0.1/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://127.1/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://1.2.3.4./x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com.0x10/x", AGENT, "DECLARATION_URL_REFUSED"),
    # Single-label and special-use names.
    ("https://localhost/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://intranet/x", AGENT, "DECLARATION_URL_REFUSED"),
    ("https://agent.localhost/x", "provenance:domain:agent.localhost", "DECLARATION_URL_REFUSED"),
    ("https://printer.local/x", "provenance:domain:printer.local", "DECLARATION_URL_REFUSED"),
    ("https://agent.test/x", "provenance:domain:agent.test", "DECLARATION_URL_REFUSED"),
    ("https://agent.invalid/x", "provenance:domain:agent.invalid", "DECLARATION_URL_REFUSED"),
    ("https://agent.example/x", "provenance:domain:agent.example", "DECLARATION_URL_REFUSED"),
    ("https://abcdefghijklmnop.onion/x", "provenance:domain:abcdefghijklmnop.onion", "DECLARATION_URL_REFUSED"),
    ("https://router.home.arpa/x", "provenance:domain:router.home.arpa", "DECLARATION_URL_REFUSED"),
    ("https://svc.internal/x", "provenance:domain:svc.internal", "DECLARATION_URL_REFUSED"),
    ("https://svc.alt/x", "provenance:domain:svc.alt", "DECLARATION_URL_REFUSED"),
    # What RHEL-family hosts files map to loopback (issue 29 §9).
    ("https://localhost.localdomain/x", "provenance:domain:localhost.localdomain", "DECLARATION_URL_REFUSED"),
    ("https://localhost4.localdomain4/x", "provenance:domain:localhost4.localdomain4", "DECLARATION_URL_REFUSED"),
    ("https://localhost6.localdomain6/x", "provenance:domain:localhost6.localdomain6", "DECLARATION_URL_REFUSED"),
    ("https://agent.LocalDomain/x", "provenance:domain:agent.localdomain", "DECLARATION_URL_REFUSED"),
    # The id: its canonical spelling, and the location it names.
    ("https://agent.example.com/.well-known/provenance.json", "provenance:domain:AGENT.example.com", "PROVENANCE_ID_NOT_CANONICAL"),
    ("https://agent.example.com/.well-known/provenance.json", "provenance:domain:agent.example.com/", "PROVENANCE_ID_NOT_CANONICAL"),
    ("https://agent.example.com/.well-known/provenance.json", "provenance:DOMAIN:agent.example.com", "PROVENANCE_ID_NOT_CANONICAL"),
    ("https://agent.example.com/.well-known/provenance.json", "not an id", "PROVENANCE_ID_INVALID"),
    ("https://agent.example.com/.well-known/provenance.json", None, "PROVENANCE_ID_INVALID"),
    ("https://evil.example.org/.well-known/provenance.json", AGENT, "DECLARATION_LOCATION_MISMATCH"),
    ("https://sub.agent.example.com/.well-known/provenance.json", AGENT, "DECLARATION_LOCATION_MISMATCH"),
    ("https://example.com/agents/ALICE/x.json", "provenance:domain:example.com/agents/alice", "DECLARATION_LOCATION_MISMATCH"),
    ("https://agent.example.com/a/../.well-known/provenance.json", AGENT, "DECLARATION_LOCATION_MISMATCH"),
    ("https://example.com/agents/alice/..%2F..%2Fagents%2Fmallory%2Fprovenance.json",
     "provenance:domain:example.com/agents/alice", "DECLARATION_LOCATION_MISMATCH"),
    ("https://example.com/agents/alice/..%5C..%5Cagents%5Cmallory%5Cprovenance.json",
     "provenance:domain:example.com/agents/alice", "DECLARATION_LOCATION_MISMATCH"),
    ("https://example.com/agents/alice/..;/mallory/provenance.json",
     "provenance:domain:example.com/agents/alice", "DECLARATION_LOCATION_MISMATCH"),
    ("https://github.com/attacker/x/blob/main/alice/agent/PROVENANCE.yml", "provenance:github:alice/agent", "DECLARATION_LOCATION_MISMATCH"),
    ("https://unknown-host.example.org/alice/agent", "provenance:github:alice/agent", "DECLARATION_LOCATION_MISMATCH"),
]


@pytest.mark.parametrize("url, provenance_id, code", GATE_REFUSALS)
def test_gate_refusals(url, provenance_id, code):
    with pytest.raises(SenderIdentityError) as exc:
        check_declaration_url(url, provenance_id)
    assert exc.value.status == 403 and exc.value.code == code, str(exc.value)
    status, body = ajp.error_response(exc.value)
    assert status == 403 and body.code == code


def test_gate_is_exported_as_the_receiver_calls_it():
    assert ajpcore.provenance.check_declaration_url is check_declaration_url
    assert list(inspect.signature(check_declaration_url).parameters) == ["url", "provenance_id"]


# -- end to end: a pinned identity cannot be respelled ------------------------------------

PID = "provenance:domain:agent.example.com"
URL = "https://agent.example.com/.well-known/provenance.json"
RECEIVER = "provenance:domain:receiver.example"
NOW = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)
OWNER = Ed25519PrivateKey.from_seed(bytes(range(32)))
ATTACKER = Ed25519PrivateKey.from_seed(bytes(range(7, 39)))
RESPELLINGS = [
    "provenance:domain:AGENT.example.com",
    "provenance:domain:Agent.Example.Com",
    "provenance:DOMAIN:agent.example.com",
    "PROVENANCE:domain:agent.example.com",
    "provenance:domain:agent.example.com/",
    "provenance:domain:agent.example.com//",
    "provenance:domain:agent.example.com.",
    "provenance:domain://agent.example.com",
]


def _declaration(key, provenance_id):
    doc = {
        "provenance": "0.2",
        "name": "Research Agent",
        "description": "Finds and summarises papers.",
        "provenance_id": provenance_id,
        "capabilities": ["read:web"],
    }
    return ajpcore.canonicalize(sign_declaration(doc, key))


def _offer(key, provenance_id, job_id="job_respelled"):
    return ajp.new_offer(
        sender={"type": "agent", "provenance_id": provenance_id, "declaration_url": URL},
        to=RECEIVER,
        task={"type": "summarise", "instruction": "Summarise the three most cited papers."},
        now=NOW,
        private_key=key,
        job_id=job_id,
    )


def _owner_pinned():
    pins = MemoryKeyPins()
    ident = ajp.verify_sender(_offer(OWNER, PID), _declaration(OWNER, PID), retrieved_from=URL, pins=pins)
    assert ident.provenance_id == PID and pins.pinned(PID) == OWNER.public_key.fingerprint
    return pins


def _receive(data, **kwargs):
    """``receive_offer`` with the recipient, on versions whose receive_offer requires it."""
    if "recipient" in inspect.signature(ajp.receive_offer).parameters:
        kwargs["recipient"] = RECEIVER
        kwargs.setdefault("require_capabilities", ())  # these declarations are about identity, not delegation
    if "replay_guard" in inspect.signature(ajp.receive_offer).parameters:
        kwargs.setdefault("replay_guard", ajp.NO_REPLAY_GUARD)
    return ajp.receive_offer(data, now=NOW, **kwargs)


def test_the_pin_holds_against_the_canonical_spelling(core):
    pins = _owner_pinned()
    with pytest.raises(KeyRotated):
        ajp.verify_sender(_offer(ATTACKER, PID), _declaration(ATTACKER, PID), retrieved_from=URL, pins=pins)


GATE_ID_CODES = ("PROVENANCE_ID_NOT_CANONICAL", "PROVENANCE_ID_INVALID")  # what the URL gate says of a respelling


@pytest.mark.parametrize("respelled", RESPELLINGS)
def test_a_respelled_id_is_refused_by_verify_sender(core, respelled):
    pins = _owner_pinned()
    # The attacker serves its own declaration at the owner's location (an expired domain),
    # and signs offer and declaration under a respelling of the owner's id.
    decl = _declaration(ATTACKER, respelled)
    result = verify_declaration(ajpcore.decode(decl), URL)
    assert result.valid and result.location == "unchecked" and not result.trustworthy
    assert "not in canonical form (`provenance:domain:agent.example.com`)" in result.reason
    # The URL gate refuses the respelled id first, as the Receiver does (issue 29 item 8: one verdict).
    with pytest.raises(SenderIdentityError) as exc:
        ajp.verify_sender(_offer(ATTACKER, respelled), decl, retrieved_from=URL, pins=pins)
    assert exc.value.status == 403 and exc.value.code in GATE_ID_CODES
    # Nothing was pinned for the respelling; the owner's pin is untouched.
    assert pins.pinned(respelled) is None and pins.pinned(PID) == OWNER.public_key.fingerprint
    # An offer under the respelling with the canonical declaration: the same refusal.
    with pytest.raises(SenderIdentityError) as exc:
        ajp.verify_sender(_offer(ATTACKER, respelled), _declaration(ATTACKER, PID), retrieved_from=URL, pins=pins)
    assert exc.value.code in GATE_ID_CODES


@pytest.mark.parametrize("respelled", RESPELLINGS)
def test_a_respelled_id_is_refused_by_receive_offer(core, respelled):
    pins = _owner_pinned()
    data = _offer(ATTACKER, respelled).to_json()
    with pytest.raises(SenderIdentityError) as exc:
        _receive(data, declaration=_declaration(ATTACKER, respelled), retrieved_from=URL, pins=pins)
    assert exc.value.status == 403 and exc.value.code in GATE_ID_CODES
    assert pins.pinned(respelled) is None
    # The owner's own offers still go through, with the canonical id.
    accepted = _receive(_offer(OWNER, PID, job_id="job_owner").to_json(), declaration=_declaration(OWNER, PID),
                        retrieved_from=URL, pins=pins)
    assert accepted.sender.provenance_id == PID


def test_the_url_gate_refuses_the_respelling_before_any_fetch():
    for respelled in RESPELLINGS:
        with pytest.raises(SenderIdentityError) as exc:
            check_declaration_url(URL, respelled)
        assert exc.value.code in ("PROVENANCE_ID_NOT_CANONICAL", "PROVENANCE_ID_INVALID")


@pytest.mark.parametrize("host", ["169.254.169.254", "[::1]", "[::ffff:169.254.169.254]", "2852039166", "0x7f.1",
                                  "0177.0.0.1", "127.1", "0x7f000001", "1.2.3.4."])
def test_gate_names_an_ip_literal_as_such(host):
    with pytest.raises(SenderIdentityError, match="its host is an IP address"):
        check_declaration_url(f"https://{host}/.well-known/provenance.json", "provenance:domain:agent.example.com")


class _AgreeableStr(str):
    """A str subclass that claims to equal everything."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


def test_a_str_subclass_cannot_vouch_for_its_own_spelling():
    respelled = _AgreeableStr("provenance:DOMAIN:agent.example.com")
    assert check_location(respelled, HOME) == "unchecked"
    with pytest.raises(SenderIdentityError) as exc:
        require_canonical_provenance_id(respelled)
    assert exc.value.code == "PROVENANCE_ID_NOT_CANONICAL"
    with pytest.raises(SenderIdentityError):
        check_declaration_url(HOME, respelled)
    assert check_location(_AgreeableStr(AGENT), _AgreeableStr(HOME)) == "match"  # a plain spelling still is


# -- the location check against a real file server (issue 29 §1) ---------------------------

ALICE = "provenance:domain:example.com/agents/alice"
SERVED_PATHS = [
    # Each path is asked of the gate as https://example.com<path> and of http.server as <path>.
    "/agents/alice/provenance.json",
    "/agents/alice/sub/provenance.json",
    "/agents/alice/%70rovenance.json",
    "/agents/alice/..%2F..%2Fagents%2Fmallory%2Fprovenance.json",
    "/agents/alice/..%2f..%2fagents%2fmallory%2fprovenance.json",
    "/agents/alice/%2e%2e%2Fmallory%2Fprovenance.json",
    "/agents/alice/%2E%2E/mallory/provenance.json",
    "/agents/alice/.%2e/mallory/provenance.json",
    "/agents/alice/..%5C..%5Cagents%5Cmallory%5Cprovenance.json",
    "/agents/alice/..;/mallory/provenance.json",
    "/agents/alice/%2e%2e%3B/mallory/provenance.json",
    "/agents/alice/sub%2F..%2F..%2Fmallory%2Fprovenance.json",
    "/agents/alice/%252E%252E%252Fmallory%252Fprovenance.json",
    "/agents/alice%2F..%2Fmallory/provenance.json",
    "/agents/alice/x/%2e%2e/%2e%2e/mallory/provenance.json",
]


@pytest.fixture
def file_server(tmp_path):
    """http.server on 127.0.0.1 serving a tree whose every file holds its own path."""
    import functools
    import http.server
    import threading

    for rel in ("agents/alice/provenance.json", "agents/alice/sub/provenance.json",
                "agents/mallory/provenance.json", "provenance.json"):
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(rel)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _served(port, path):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)  # sent as written: http.client does not normalize the path
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_every_admitted_url_is_served_from_the_ids_directory(file_server):
    admitted = []
    for path in SERVED_PATHS:
        url = "https://example.com" + path
        verdict = check_location(ALICE, url)
        try:
            check_declaration_url(url, ALICE)
            gate = True
        except SenderIdentityError:
            gate = False
        assert gate == (verdict == "match"), path
        if verdict == "match":
            admitted.append(path)
            status, body = _served(file_server, path)
            assert status == 404 or body.startswith("agents/alice/"), (path, body)
    # The plain paths, and the doubly encoded one (a file named "%2E%2E%2F..." in alice's directory).
    assert len(admitted) == 4, admitted
    # The attack is real against this server: the encoded form reaches mallory's file.
    status, body = _served(file_server, "/agents/alice/..%2F..%2Fagents%2Fmallory%2Fprovenance.json")
    assert (status, body) == (200, "agents/mallory/provenance.json")
