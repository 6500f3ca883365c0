"""The example receivers of ``examples/`` behind real servers: FastAPI under uvicorn and Flask under
gunicorn, each with 2 worker processes on 127.0.0.1 sharing a SQLite store (and a Redis one when
``AJPCORE_TEST_REDIS_URL`` is set), driven by the Node sender (offers built as the reference
``AJPClient.send`` builds them) and from Python.

Run by the ``examples`` nox session (``AJPCORE_EXAMPLES=1``, with fastapi, uvicorn, flask, gunicorn
and httpx installed); elsewhere it skips and says so.  The Node part needs
``AJPCORE_INTEROP_NODE_MODULES`` (an ``npm ci`` of tests/interop, which ``.ci/run`` makes); under
``CI=true`` a missing one fails.  Loopback only, free ports, bounded loops, servers always stopped.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import pytest

import ajpcore
from ajpcore import Ed25519PrivateKey, ajp
from ajpcore.provenance import sign_declaration

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
IN_CI = os.environ.get("CI", "").strip().lower() == "true"

if os.environ.get("AJPCORE_EXAMPLES") != "1":
    pytest.skip("the example servers run in the `examples` nox session (AJPCORE_EXAMPLES=1)", allow_module_level=True)
httpx = pytest.importorskip("httpx")

RECIPIENT = "provenance:domain:receiver.ajpcore-example.net"
SECRET = "example-shared-secret"
AGENT = "provenance:domain:research-agent.ajpcore-example.net"
AGENT_URL = "https://research-agent.ajpcore-example.net/.well-known/provenance.json"
AGENT_KEY = Ed25519PrivateKey.from_seed(b"ajpcore example agent key seed!!")  # fixed: pins survive reruns
NO_DELEGATION = "provenance:domain:lonely-agent.ajpcore-example.net"
NO_DELEGATION_URL = "https://lonely-agent.ajpcore-example.net/.well-known/provenance.json"
TABLE: list = []  # what was sent, what each worker answered (printed at the end of each server's run)


def _declaration(pid: str, capabilities: list) -> str:
    doc = {"provenance": "0.2", "name": "Example agent", "description": "An ajpcore example sender.",
           "provenance_id": pid, "capabilities": capabilities, "constraints": []}
    return ajpcore.canonicalize(sign_declaration(doc, AGENT_KEY)).decode()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _command(framework: str, port: int) -> list:
    if framework == "fastapi":
        return [sys.executable, "-m", "uvicorn", "--app-dir", str(EXAMPLES), "fastapi_receiver:app",
                "--host", "127.0.0.1", "--port", str(port), "--workers", "2", "--log-level", "warning"]
    return [sys.executable, "-m", "gunicorn", "--chdir", str(EXAMPLES), "-w", "2", "--threads", "4",
            "-b", f"127.0.0.1:{port}", "--log-level", "warning", "flask_receiver:app"]


STORES = ["sqlite"] + (["redis"] if os.environ.get("AJPCORE_TEST_REDIS_URL") else [])


@pytest.fixture(params=[(f, s) for f in ("fastapi", "flask") for s in STORES], ids=lambda p: f"{p[0]}-{p[1]}")
def server(request, tmp_path):
    framework, store = request.param
    declarations = tmp_path / "declarations.json"
    declarations.write_text(json.dumps({
        AGENT_URL: _declaration(AGENT, ["read:web", "delegate:agents"]),
        NO_DELEGATION_URL: _declaration(NO_DELEGATION, ["read:web"]),
    }))
    env = dict(os.environ, AJP_RECIPIENT=RECIPIENT, AJP_SECRET=SECRET, AJP_STATE_DIR=str(tmp_path / "state"),
               AJP_DECLARATIONS=str(declarations),
               # the servers import the ajpcore under test, wherever it was imported from
               PYTHONPATH=os.pathsep.join([str(EXAMPLES), str(Path(ajpcore.__file__).resolve().parent.parent)]))
    env.pop("AJP_REDIS_URL", None)
    if store == "redis":
        env["AJP_REDIS_URL"] = os.environ["AJPCORE_TEST_REDIS_URL"]
        env["AJP_REDIS_PREFIX"] = f"ajpcore-examples-{uuid.uuid4().hex[:12]}:"
    port = _free_port()
    log = open(tmp_path / "server.log", "wb")
    proc = subprocess.Popen(_command(framework, port), env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, cwd=tmp_path)
    base = f"http://127.0.0.1:{port}/ajp"  # both examples mount ajpcore.ajp.adapters' app under /ajp
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{framework} server exited with {proc.returncode}:\n{(tmp_path / 'server.log').read_text()}")
            try:
                if httpx.get(f"{base}/jobs/job_probe_0000", timeout=2).status_code == 404:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{framework} server not answering after 30 s:\n{(tmp_path / 'server.log').read_text()}")
            time.sleep(0.2)
        TABLE.clear()
        yield framework, store, base
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)
        log.close()


def _post(base: str, path: str, body: bytes, what: str, headers: Optional[dict] = None) -> httpx.Response:
    sent = {"content-type": "application/json"} if headers is None else headers
    response = httpx.post(base + path, content=body, headers=sent, timeout=30)
    _record(what, response)
    return response


def _record(what: str, response: "httpx.Response") -> None:
    body = response.json() if response.content else None
    detail = body.get("code") or body.get("status") or body.get("error") if isinstance(body, dict) else body
    if response.headers.get("x-ajp-duplicate") == "true":
        detail = f"{detail} (duplicate)"
    TABLE.append((what, response.headers.get("x-worker"), response.status_code, detail))


def _from_both_workers(send, check) -> set:
    """Bursts of 16 concurrent requests (at most 10 bursts) until both workers answered; each answer checked."""
    workers: set = set()
    with ThreadPoolExecutor(16) as pool:
        for burst in range(10):
            for response in pool.map(send, range(burst * 16, burst * 16 + 16)):
                check(response)
                workers.add(response.headers["x-worker"])
            if len(workers) == 2:
                break
    assert len(workers) == 2, "both workers should have answered within 160 requests"
    return workers


def _runs(base: str, job_id: str) -> int:
    response = httpx.get(f"{base}/jobs/{job_id}", timeout=10)
    assert response.status_code == 200, response.text
    status = ajp.JobStatus.from_json(response.content)
    assert status.status == "completed" and status.job_id == job_id
    return int(dict(part.split("=") for part in (status.message or "").split())["runs"])


def _agent_offer(job_id: str, instruction: str = "Summarise the three most cited papers.", to: str = RECIPIENT,
                 sender: str = AGENT, url: str = AGENT_URL) -> bytes:
    return ajp.new_offer(sender={"type": "agent", "provenance_id": sender, "declaration_url": url}, to=to,
                         task={"type": "summarise", "instruction": instruction}, now=datetime.now(timezone.utc),
                         private_key=AGENT_KEY, job_id=job_id).to_json()


def _node_modules():
    folder = os.environ.get("AJPCORE_INTEROP_NODE_MODULES")
    why = None
    if shutil.which("node") is None:
        why = "node is not installed"
    elif not folder or not (Path(folder) / "node_modules" / "provenance-protocol").is_dir():
        why = "AJPCORE_INTEROP_NODE_MODULES is not an `npm ci` of tests/interop"
    if why is not None:
        if IN_CI:
            pytest.fail("CI=true: the Node sender must run, but " + why)
        return None, why
    return folder, None


def _node_send(base: str, tmp_path: Path, config: dict) -> dict:
    folder, why = _node_modules()
    if folder is None:
        pytest.skip(why)
    path = tmp_path / f"sender-{uuid.uuid4().hex[:8]}.json"
    path.write_text(json.dumps(config))
    done = subprocess.run(["node", str(EXAMPLES / "node_sender.mjs"), "--modules", folder, "--url", base,
                           "--config", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict = json.loads(done.stdout)
    for step in result["steps"]:
        detail = step["body"].get("code") or step["body"].get("status") or step["body"].get("settled") \
            if isinstance(step["body"], dict) else step["body"]
        if step["duplicate"]:
            detail = f"{detail} (duplicate)"
        TABLE.append((f"node {config['from']['type']}: {step['step']}", step["worker"], step["status"], detail))
    return result


def _print_table(framework: str, store: str) -> None:
    lines = [f"\n{framework} (2 workers), {store} store", "| sent | worker | status | answer |", "|---|---|---|---|"]
    rows: dict = {}  # repeated requests are counted per (what, worker, status, answer)
    for row in TABLE:
        rows[row] = rows.get(row, 0) + 1
    lines += [f"| {what}{f' (x{n})' if n > 1 else ''} | {worker} | {status} | {detail} |"
              for (what, worker, status, detail), n in rows.items()]
    sys.__stdout__.write("\n".join(lines) + "\n")


def test_examples_behind_a_real_server(server, tmp_path):
    framework, store, base = server
    run = uuid.uuid4().hex[:10]

    # 1. the Node sender (AJPClient.send's offer): accepted, retry 202 duplicate, status, ack, bad ack 400
    folder, _ = _node_modules()
    if folder is not None:
        result = _node_send(base, tmp_path, {
            "from": {"type": "agent", "provenance_id": AGENT, "declaration_url": AGENT_URL},
            "to": RECIPIENT, "task": {"type": "summarise", "instruction": "Summarise this."},
            "private_key": AGENT_KEY.to_string(), "job_id": f"job_node_agent_{run}",
        })
        steps = {s["step"]: s for s in result["steps"]}
        assert steps["send"]["status"] == 202 and not steps["send"]["duplicate"]
        assert steps["send"]["body"] == {"job_id": f"job_node_agent_{run}", "status": "accepted"}
        assert steps["retry"]["status"] == 202 and steps["retry"]["duplicate"]
        assert steps["retry"]["body"] == steps["send"]["body"]
        assert steps["status"]["status"] == 200 and steps["status"]["body"]["status"] == "completed"
        assert steps["ack"]["status"] == 200 and steps["ack"]["body"] == {"settled": True}
        assert steps["bad ack"]["status"] == 400 and steps["bad ack"]["body"]["error"] == "Invalid Ack"
        human = _node_send(base, tmp_path, {
            "from": {"type": "human", "id": "user_node"}, "to": RECIPIENT,
            "task": {"type": "summarise", "instruction": "Summarise that."}, "secret": SECRET,
            "job_id": f"job_node_human_{run}",
        })
        assert [s["status"] for s in human["steps"]][:2] == [202, 202]
        # the Node offer's bytes, replayed by Python: refused by every worker (a retry: 202 duplicate)
        wire = base64.b64decode(result["offer_b64"])
        def replayed(response):
            assert response.status_code == 202 and response.headers["x-ajp-duplicate"] == "true"

        _from_both_workers(lambda n: _post(base, "/jobs", wire, "python: node offer replayed"), replayed)
        assert _runs(base, f"job_node_agent_{run}") == 1

    # 2. one new offer sent 8 times at once: accepted exactly once across both workers
    job_id = f"job_python_{run}"
    offer = _agent_offer(job_id)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: _post(base, "/jobs", offer, "python: same offer x8 at once"), range(8)))
    # The adapters take the job through `run=`: a copy that arrives while the first is being taken
    # is 503 IN_PROGRESS with Retry-After (never a 202 for a job the host may still drop), one that
    # arrives after is the duplicate 202; a sender retrying the 503s then gets the duplicate.
    for answer in answers:
        if answer.status_code == 503:
            assert answer.json()["code"] == "IN_PROGRESS" and int(answer.headers["retry-after"]) >= 1
        else:
            assert answer.status_code == 202
    assert sum(a.status_code == 202 and a.headers.get("x-ajp-duplicate") != "true" for a in answers) == 1
    retried = _post(base, "/jobs", offer, "python: same offer, retried after the 503s")
    assert retried.status_code == 202 and retried.headers["x-ajp-duplicate"] == "true"
    assert _runs(base, job_id) == 1

    # 3. another body under the same job id: 409 from every worker
    def conflict(response):
        assert response.status_code == 409 and response.json()["code"] == "REPLAY"

    _from_both_workers(lambda n: _post(base, "/jobs", _agent_offer(job_id, instruction=f"Something else {n}."),
                                       "python: other body, same job id"), conflict)
    assert _runs(base, job_id) == 1

    # 4. refusals: wrong recipient 403, no delegate:agents 403, bad signature 401, malformed 400
    wrong = _post(base, "/jobs", _agent_offer(f"job_wrong_{run}", to="provenance:domain:other.ajpcore-example.net"),
                  "python: offer for another agent")
    assert wrong.status_code == 403 and wrong.json()["code"] == "WRONG_RECIPIENT"
    lonely = _post(base, "/jobs", _agent_offer(f"job_lonely_{run}", sender=NO_DELEGATION, url=NO_DELEGATION_URL),
                   "python: agent without delegate:agents")
    assert lonely.status_code == 403 and lonely.json()["code"] == "CAPABILITY_NOT_DECLARED"
    tampered = json.loads(_agent_offer(f"job_tampered_{run}"))
    tampered["budget"]["max_usd"] = 1000
    forged = _post(base, "/jobs", json.dumps(tampered).encode(), "python: tampered budget")
    assert forged.status_code == 401
    malformed = _post(base, "/jobs", b'{"ajp": "0.1", "ajp": "0.1"}', "python: duplicate member names")
    assert malformed.status_code == 400 and malformed.json()["error"] == "Invalid JobOffer"
    assert httpx.get(f"{base}/jobs/job_unknown_{run}", timeout=10).status_code == 404

    # 5. what a new user tries (issue 31): the body bound, the Content-Type rule; nothing runs
    limit = 64 * 1024  # examples/receiver_setup.py MAX_BODY, the Receiver's max_body_bytes
    big = _post(base, "/jobs", b"{" + b" " * (5 << 20) + b"}", "python: 5 MB body")
    assert big.status_code == 413 and big.json()["code"] == "PAYLOAD_TOO_LARGE" and big.json()["reason"]

    def chunks():
        for _ in range(80):
            yield b" " * 65536

    streamed = httpx.post(base + "/jobs", content=chunks(), headers={"content-type": "application/json"}, timeout=30)
    _record("python: 5 MB body, chunked (no length)", streamed)
    assert streamed.status_code == 413
    fits = _post(base, "/jobs", _agent_offer(f"job_fits_{run}", instruction="x" * (limit // 2)), "python: 32 kB offer")
    assert fits.status_code == 202
    medias = {"text/plain": "text/plain", "form": "application/x-www-form-urlencoded",
              "multipart": "multipart/form-data; boundary=ajpcore"}
    for name, media in medias.items():
        refused = _post(base, "/jobs", _agent_offer(f"job_media_{name}_{run}"), f"python: Content-Type {name}",
                        {"content-type": media})
        assert refused.status_code == 415 and refused.json()["code"] == "UNSUPPORTED_MEDIA_TYPE"
    bare = _post(base, "/jobs", _agent_offer(f"job_media_none_{run}"), "python: no Content-Type", {})
    assert bare.status_code == 415
    for name in list(medias) + ["none"]:
        assert httpx.get(f"{base}/jobs/job_media_{name}_{run}", timeout=10).status_code == 404  # never ran
    assert httpx.get(f"{base.rsplit('/ajp', 1)[0]}/health", timeout=10).json() == {"status": "ok"}  # the app's own

    # 6. the Python example sender end to end (human, HMAC)
    done = subprocess.run([sys.executable, str(EXAMPLES / "sender.py"), base, "--to", RECIPIENT, "--secret", SECRET,
                           "--job-id", f"job_sender_py_{run}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    for line in done.stdout.splitlines():
        step = json.loads(line)
        body = step["body"]
        TABLE.append((f"sender.py: {step['step']}", step["worker"], step["status"],
                      body.get("status") or body.get("settled") if isinstance(body, dict) else body))
    _print_table(framework, store)
