"""The ASGI and WSGI applications of ``ajpcore.ajp.adapters`` (issue 31, item 2), called directly as a
server calls them, on both core twins: the new user's cases (sent, status, body, runs), the body bound
as a streaming read limit, the Content-Type rule, 202/409/413/415/429/503 with Retry-After, routing,
mounting, and the host's callbacks (sync and async).  Behind real servers: tests/receive/test_examples_behind_servers.py.
"""

from __future__ import annotations

import asyncio
import io
import json
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Tuple

import pytest

import ajpcore
from ajpcore import Ed25519PrivateKey, ajp
from ajpcore.ajp import adapters
from ajpcore.provenance import sign_declaration

ME = "provenance:domain:receiver.example"
SECRET = b"platform-secret"
NOW = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)
PID = "provenance:domain:agent.example.com"
URL = "https://agent.example.com/.well-known/provenance.json"
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
DECL = ajpcore.canonicalize(sign_declaration(
    {"provenance": "0.2", "name": "Agent", "description": "An agent.", "provenance_id": PID,
     "capabilities": ["delegate:agents"], "constraints": []}, KEY))
JSON = {"content-type": "application/json"}


def human(job_id: str = "job_adapter_0001", instruction: str = "Summarise the notes.") -> bytes:
    return ajp.new_offer(sender={"type": "human", "id": "u1"}, to=ME, task={"type": "t", "instruction": instruction},
                         now=NOW, secret=SECRET, job_id=job_id).to_json()


class Host:
    """The host's job store: what the adapters call back, and how often."""

    def __init__(self) -> None:
        self.runs: Dict[str, int] = {}
        self.acks: List[str] = []

    def accept(self, received: ajp.ReceivedOffer) -> None:
        self.runs[received.job_id] = self.runs.get(received.job_id, 0) + 1

    def status(self, job_id: str) -> Optional[Dict[str, Any]]:
        return {"status": "completed", "progress": 1} if job_id in self.runs else None

    def ack(self, job_id: str, ack: ajp.Ack) -> None:
        self.acks.append(job_id)


class AsyncHost(Host):
    async def accept(self, received: ajp.ReceivedOffer) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        super().accept(received)

    async def status(self, job_id: str) -> Optional[Dict[str, Any]]:  # type: ignore[override]
        return super().status(job_id)


def build(kind: str, host: Host, **receiver_kw: Any) -> Any:
    receiver_kw.setdefault("recipient", ME)
    receiver_kw.setdefault("secret", SECRET)
    receiver_kw.setdefault("replay_guard", ajp.MemoryReplayGuard())
    receiver = ajp.Receiver(**receiver_kw)
    make = adapters.asgi_app if kind == "asgi" else adapters.wsgi_app
    return make(receiver, accept=host.accept, status=host.status, ack=host.ack, clock=lambda: NOW,
                headers=lambda answer: {"x-answered-by": "test"})


def call_asgi(app: Any, method: str, path: str, body: bytes = b"", headers: Optional[Dict[str, str]] = None,
              chunk: int = 0, root_path: str = "") -> Tuple[int, Dict[str, str], bytes, int]:
    """One request through an ASGI app: (status, headers, body, bytes the app read)."""
    chunks = [body[i:i + chunk] for i in range(0, len(body), chunk)] if chunk else [body]
    read = [0]

    async def receive() -> Dict[str, Any]:
        if not chunks:
            return {"type": "http.disconnect"}
        part = chunks.pop(0)
        read[0] += len(part)
        return {"type": "http.request", "body": part, "more_body": bool(chunks)}

    sent: List[Dict[str, Any]] = []

    async def send(message: Dict[str, Any]) -> None:
        sent.append(message)

    fields = dict(headers or {})
    if not chunk:  # a server passes the declared length on
        fields.setdefault("content-length", str(len(body)))
    scope = {"type": "http", "method": method, "path": root_path + path, "root_path": root_path,
             "headers": [(k.encode(), v.encode()) for k, v in fields.items()]}
    asyncio.run(app(scope, receive, send))
    start, payload = sent
    got = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], got, payload["body"], read[0]


class CountingInput(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: Optional[int] = -1) -> bytes:
        data = super().read(size)
        self.taken += len(data)
        return data


def call_wsgi(app: Any, method: str, path: str, body: bytes = b"", headers: Optional[Dict[str, str]] = None,
              chunk: int = 0, root_path: str = "") -> Tuple[int, Dict[str, str], bytes, int]:
    stream = CountingInput(body)
    environ: Dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": path, "SCRIPT_NAME": root_path,
                               "wsgi.input": stream}
    headers = headers or {}
    if "content-type" in headers:
        environ["CONTENT_TYPE"] = headers["content-type"]
    if chunk:  # a chunked body: no Content-Length, the server says the input ends
        environ["wsgi.input_terminated"] = True
    else:
        environ["CONTENT_LENGTH"] = headers.get("content-length", str(len(body)))
    started: List[Any] = []
    out = b"".join(app(environ, lambda status, hdrs: started.append((status, hdrs))))
    status, hdrs = started[0]
    return int(status.split()[0]), {k: v for k, v in hdrs}, out, stream.taken


CALL = {"asgi": call_asgi, "wsgi": call_wsgi}


@pytest.fixture(params=["asgi", "wsgi"])
def kind(request):
    return request.param


def test_the_new_users_cases(core, kind):
    """What a new user sends, what is answered, how often the job runs (the table of issue 31)."""
    host = Host()
    app = build(kind, host)
    call = CALL[kind]
    offer = human()
    rows = []

    def send(what: str, body: bytes, headers: Dict[str, str] = JSON, **kw: Any) -> Dict[str, Any]:
        status, got, payload, _ = call(app, "POST", "/jobs", body, headers, **kw)
        answer = json.loads(payload)
        rows.append((what, status, answer.get("code") or answer.get("status"), host.runs.get("job_adapter_0001", 0)))
        assert got["content-type"] == "application/json" and got["x-answered-by"] == "test"
        assert got["content-length"] == str(len(payload))
        return {"status": status, "body": answer, "headers": got}

    assert send("signed offer", offer)["status"] == 202
    retry = send("the same offer again (lost answer)", offer)
    assert retry["status"] == 202 and retry["body"] == {"job_id": "job_adapter_0001", "status": "accepted"}
    assert send("another body, same job id", human(instruction="Other."))["status"] == 409
    assert send("5 MB body", b"{" + b" " * (5 << 20) + b"}")["status"] == 413
    assert send("5 MB body, chunked", b" " * (5 << 20), chunk=64 * 1024)["status"] == 413
    for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        assert send(f"Content-Type {media}", offer, {"content-type": media})["status"] == 415
    assert send("no Content-Type", offer, {})["status"] == 415
    assert send("not JSON", b"job=1", JSON)["status"] == 400
    assert host.runs == {"job_adapter_0001": 1}  # every case answered, the job ran once
    for what, status, answer, runs in rows:
        print(f"| {kind} | {what} | {status} | {answer} | {runs} |")


def test_the_body_bound_is_a_streaming_read_limit(core, kind):
    host = Host()
    app = build(kind, host, max_body_bytes=4096)
    call = CALL[kind]
    status, headers, body, read = call(app, "POST", "/jobs", b"x" * (1 << 20), JSON)
    assert status == 413 and read == 0  # the declared length is over: nothing read
    assert json.loads(body)["code"] == "PAYLOAD_TOO_LARGE" and headers["connection"] == "close"
    status, _, body, read = call(app, "POST", "/jobs", b"x" * (1 << 20), JSON, chunk=1024)
    assert status == 413 and read <= 4096 + 1024  # no length: read stops just past the bound
    status, _, _, _ = call(app, "POST", "/jobs", human(), JSON, chunk=100)
    assert status == 202 and host.runs == {"job_adapter_0001": 1}  # a chunked offer under the bound


def test_status_and_ack(core, kind):
    host = Host()
    app = build(kind, host)
    call = CALL[kind]
    assert call(app, "GET", "/jobs/job_adapter_0001")[0] == 404
    assert call(app, "POST", "/jobs", human(), JSON)[0] == 202
    status, _, body, _ = call(app, "GET", "/jobs/job_adapter_0001")
    assert status == 200 and ajp.JobStatus.from_json(body).status == "completed"
    assert call(app, "POST", "/jobs/job_adapter_0001/ack", b'{"received": true}', JSON)[:3:2] == (200, b'{"settled":true}')
    assert host.acks == ["job_adapter_0001"]
    bad = call(app, "POST", "/jobs/job_adapter_0001/ack", b'{"received": "yes"}', JSON)
    assert bad[0] == 400 and json.loads(bad[2])["error"] == "Invalid Ack" and json.loads(bad[2])["reason"]
    assert call(app, "POST", "/jobs/job_other/ack", b'{"received": true}', JSON)[0] == 404
    assert call(app, "POST", "/jobs/job_adapter_0001/ack", b'{"received": true}', {"content-type": "text/plain"})[0] == 415
    assert host.acks == ["job_adapter_0001"]


def test_routing_404_and_405(core, kind):
    app = build(kind, Host())
    call = CALL[kind]
    status, headers, body, _ = call(app, "GET", "/jobs")
    assert status == 405 and headers["allow"] == "POST" and json.loads(body)["code"] == "METHOD_NOT_ALLOWED"
    assert call(app, "DELETE", "/jobs/job_1")[1]["allow"] == "GET"
    for path in ("/", "/job", "/jobs/a/b", "/jobs/a/ack/more", "/other"):
        status, _, body, _ = call(app, "POST", path, b"{}", JSON)
        assert status == 404 and json.loads(body)["reason"], path
    assert call(app, "POST", "/jobs/", human(), JSON)[0] == 202  # a trailing slash is the same endpoint


def test_mounted_under_a_prefix(core, kind):
    host = Host()
    app = build(kind, host)
    status, _, _, _ = CALL[kind](app, "POST", "/jobs", human(), JSON, root_path="/ajp")
    assert status == 202 and host.runs == {"job_adapter_0001": 1}


def test_store_down_and_busy_carry_retry_after(core, kind):
    class Down:
        blocking = False

        def admit(self, *args: Any, **kwargs: Any) -> None:
            raise ajpcore.StateUnavailable("redis 10.0.0.5:6379 refused", retry_after=3)

    class Full:
        blocking = False

        def admit(self, *args: Any, **kwargs: Any) -> None:
            raise ajpcore.Busy("quota", retry_after=40)

    for guard, want, after in ((Down(), 503, "3"), (Full(), 429, "40")):
        host = Host()
        status, headers, body, _ = CALL[kind](build(kind, host, replay_guard=guard), "POST", "/jobs", human(), JSON)
        assert (status, headers["retry-after"]) == (want, after) and host.runs == {}
        assert "10.0.0.5" not in body.decode()


def test_an_agent_whose_declaration_cannot_be_fetched(core, kind):
    def unreachable(provenance_id: str, url: str) -> Any:
        raise ConnectionRefusedError(111, "connect to 10.1.2.3:443 (internal-proxy.corp.local)")

    unreachable.blocking = False  # type: ignore[attr-defined]
    host = Host()
    app = build(kind, host, declarations=unreachable)
    offer = ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=ME,
                          task={"type": "t", "instruction": "i"}, now=NOW, private_key=KEY)
    status, _, body, _ = CALL[kind](app, "POST", "/jobs", offer.to_json(), JSON)
    assert status == 403 and json.loads(body)["code"] == "DECLARATION_UNREACHABLE" and b"10.1.2.3" not in body


def test_an_agent_offer_through_the_asgi_app_with_async_callbacks(core):
    async def resolve(provenance_id: str, url: str) -> Any:
        return DECL, url

    host = AsyncHost()
    receiver = ajp.Receiver(recipient=ME, declarations=resolve, replay_guard=ajp.MemoryReplayGuard())
    app = adapters.asgi_app(receiver, accept=host.accept, status=host.status, clock=lambda: NOW)
    offer = ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=ME,
                          task={"type": "t", "instruction": "i"}, now=NOW, private_key=KEY, job_id="job_agent_1")
    assert call_asgi(app, "POST", "/jobs", offer.to_json(), JSON)[0] == 202
    assert call_asgi(app, "POST", "/jobs", offer.to_json(), JSON)[0] == 202
    assert host.runs == {"job_agent_1": 1}
    assert call_asgi(app, "GET", "/jobs/job_agent_1")[0] == 200


def test_asgi_lifespan_and_bad_arguments():
    app = build("asgi", Host())
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: List[Dict[str, Any]] = []

    async def receive() -> Dict[str, Any]:
        return messages.pop(0)

    async def send(message: Dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app({"type": "lifespan"}, receive, send))
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    receiver = ajp.Receiver(recipient=ME, secret=SECRET, replay_guard=ajp.NO_REPLAY_GUARD)
    with pytest.raises(TypeError):
        adapters.asgi_app(object(), accept=print, status=print)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        adapters.wsgi_app(receiver, accept=None, status=print)  # type: ignore[arg-type]
