"""What both example receivers share: the ``ajp.Receiver`` policy, its stores, the job table.

Configured from the environment, so that every worker process of one server builds the same
receiver over the same state:

- ``AJP_RECIPIENT``: this agent's provenance id (offers for anyone else are refused, 403);
- ``AJP_SECRET``: the shared secret of human senders (HMAC-SHA256);
- ``AJP_STATE_DIR``: a local directory for the SQLite files (replay guard, key pins, jobs);
- ``AJP_REDIS_URL``: when set, the replay guard and key pins live in Redis instead
  (``AJP_REDIS_PREFIX``: their key prefix, default ``ajpcore:``);
- ``AJP_DECLARATIONS``: a JSON file ``{url: declaration}`` served instead of the network
  (tests; a real receiver fetches each declaration URL, see ``fetch_declaration``).

The job "runs" in-process and at once (it echoes the instruction); a real agent queues it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from ajpcore import DeclarationUnreachable, ajp, provenance

RECIPIENT = os.environ.get("AJP_RECIPIENT", "provenance:domain:receiver.ajpcore-example.net")
SECRET = os.environ.get("AJP_SECRET", "example-shared-secret")
STATE_DIR = Path(os.environ.get("AJP_STATE_DIR", "ajp-state"))
REDIS_URL = os.environ.get("AJP_REDIS_URL") or None
REDIS_PREFIX = os.environ.get("AJP_REDIS_PREFIX", "ajpcore:")
MAX_BODY = 64 * 1024
"""Largest request body the examples read (bytes, the Receiver's ``max_body_bytes``); larger ones are
answered 413 unread by the adapters."""
MAX_DECLARATION = 64 * 1024


def _declaration_table() -> Optional[Dict[str, str]]:
    path = os.environ.get("AJP_DECLARATIONS")
    if not path:
        return None
    table: Dict[str, str] = json.loads(Path(path).read_text("utf-8"))
    return table


DECLARATIONS = _declaration_table()


def fetch_declaration(provenance_id: str, url: str) -> Tuple[bytes, str]:
    """The declaration at ``url``, as served, and the URL it came from (the receiver's resolver).

    ``ajp.Receiver`` calls it only for a URL its gate admitted (https, port 443, a DNS
    name, the id's own location).  No redirects (a redirect is another location), a
    5 s timeout, at most 64 KiB; any failure is ``DeclarationUnreachable`` (403).
    """
    if DECLARATIONS is not None:  # the test table: no network at all
        if url not in DECLARATIONS:
            raise DeclarationUnreachable(f"no declaration is served at {url}")
        return DECLARATIONS[url].encode("utf-8"), url
    import httpx  # only a receiver that really fetches needs it

    try:
        with httpx.stream("GET", url, follow_redirects=False, timeout=5.0) as response:
            if response.status_code != 200:
                raise DeclarationUnreachable(f"{url} answered HTTP {response.status_code}")
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_DECLARATION:
                    raise DeclarationUnreachable(f"{url} serves more than {MAX_DECLARATION} bytes")
    except httpx.HTTPError as exc:
        raise DeclarationUnreachable(f"{url} could not be fetched: {type(exc).__name__}") from None
    return body, url


async def fetch_declaration_async(provenance_id: str, url: str) -> Tuple[bytes, str]:
    """``fetch_declaration`` for async servers (httpx's async client; same rules)."""
    if DECLARATIONS is not None:
        return fetch_declaration(provenance_id, url)
    import httpx

    try:
        async with httpx.AsyncClient(follow_redirects=False, timeout=5.0) as client:
            async with client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise DeclarationUnreachable(f"{url} answered HTTP {response.status_code}")
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_DECLARATION:
                        raise DeclarationUnreachable(f"{url} serves more than {MAX_DECLARATION} bytes")
    except httpx.HTTPError as exc:
        raise DeclarationUnreachable(f"{url} could not be fetched: {type(exc).__name__}") from None
    return body, url


def _stores(asynchronous: bool) -> Tuple[Any, Any]:
    """The replay guard and key pins every worker shares: Redis when ``AJP_REDIS_URL`` is set, else SQLite."""
    if REDIS_URL is not None:
        if asynchronous:
            import redis.asyncio

            aclient = redis.asyncio.Redis.from_url(REDIS_URL)
            return (ajp.AsyncRedisReplayGuard(aclient, prefix=REDIS_PREFIX),
                    provenance.AsyncRedisKeyPins(aclient, prefix=REDIS_PREFIX))
        import redis

        client = redis.Redis.from_url(REDIS_URL)
        return ajp.RedisReplayGuard(client, prefix=REDIS_PREFIX), provenance.RedisKeyPins(client, prefix=REDIS_PREFIX)
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    state = STATE_DIR / "ajp-state.sqlite"  # one file for both stores, on a local disk
    if asynchronous:
        return ajp.AsyncSQLiteReplayGuard(state), provenance.AsyncSQLiteKeyPins(state)
    return ajp.SQLiteReplayGuard(state), provenance.SQLiteKeyPins(state)


def build_receiver(*, asynchronous: bool) -> ajp.Receiver:
    """This agent's receive policy: who it is, its senders' credentials, shared stores, the spec's rules."""
    guard, pins = _stores(asynchronous)
    return ajp.Receiver(
        recipient=RECIPIENT,
        secret=SECRET,
        declarations=fetch_declaration_async if asynchronous else fetch_declaration,
        pins=pins,
        replay_guard=guard,
        max_body_bytes=MAX_BODY,
        # require_capabilities defaults to the specification's rule: agents must declare delegate:agents
    )


class Jobs:
    """The jobs this agent accepted, in a SQLite file every worker shares (``GET /jobs/:id``, acks).

    ``runs`` counts how often a job was started: an honest retry (a duplicate 202) must not
    start it again, so it stays 1.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._local = threading.local()
        with self._db() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS jobs (job_id TEXT PRIMARY KEY, status TEXT NOT NULL, runs INTEGER NOT NULL,"
                " output TEXT NOT NULL, worker INTEGER NOT NULL, acked INTEGER NOT NULL DEFAULT 0)"
            )

    def _db(self) -> sqlite3.Connection:
        db: Optional[sqlite3.Connection] = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=10)
            db.execute("PRAGMA journal_mode=WAL")
            self._local.db = db
        return db

    def accept(self, received: ajp.ReceivedOffer) -> None:
        """The adapters' ``accept``: a new accepted offer; return once the host has the job."""
        self.start(received.offer)

    def start(self, offer: ajp.JobOffer) -> None:
        """Run the job (here: echo its instruction) and record it as completed."""
        output = json.dumps({"echo": offer.task.instruction})
        with self._db() as db:
            db.execute(
                "INSERT INTO jobs (job_id, status, runs, output, worker) VALUES (?, 'completed', 1, ?, ?)"
                " ON CONFLICT(job_id) DO UPDATE SET runs = runs + 1",
                (offer.job_id, output, os.getpid()),
            )

    def status(self, job_id: str) -> Optional[Dict[str, Any]]:
        """The JobStatus members of a job (for ``Receiver.answer_status``), or None."""
        row = self._db().execute("SELECT status, runs, output, worker FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        if row is None:
            return None
        status, runs, output, worker = row
        return {"status": status, "progress": 1, "message": f"runs={runs} worker={worker}",
                "output": json.loads(output)}

    def ack(self, job_id: str, ack: Optional[ajp.Ack] = None) -> bool:
        """Mark the job's result as received (the adapters' ``ack``); False when there is no such job."""
        with self._db() as db:
            return db.execute("UPDATE jobs SET acked = 1 WHERE job_id = ?", (job_id,)).rowcount == 1


def jobs() -> Jobs:
    return Jobs(STATE_DIR / "jobs.sqlite")


def worker_headers(answer: ajp.HttpAnswer) -> Dict[str, str]:
    """The answer's headers, plus two the tests read: which worker answered, and whether it was a retry."""
    headers = dict(answer.headers)
    headers["x-worker"] = str(os.getpid())
    if isinstance(answer, ajp.OfferAnswer) and answer.duplicate:
        headers["x-ajp-duplicate"] = "true"
    return headers
