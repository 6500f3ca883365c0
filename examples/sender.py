"""An AJP sender: build a signed JobOffer as the reference client does, POST it, poll its status, ack.

    python sender.py http://127.0.0.1:8000 --to provenance:domain:receiver.ajpcore-example.net \\
        --secret example-shared-secret --instruction "Summarise this."          # a human sender
    python sender.py URL --to ID --private-key PKCS8_B64 --provenance-id ID \\
        --declaration-url https://...                                           # an agent sender

Prints one JSON line per request (step, HTTP status, answering worker, body) and exits 0 when
the job was accepted, completed and acknowledged.  Standard library only (urllib), bounded:
every request times out after 10 s, the status is polled at most 20 times.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from typing import Any, Dict, Optional, Sequence, Tuple

from ajpcore import Ed25519PrivateKey, ajp


def request(method: str, url: str, body: Optional[bytes] = None) -> Tuple[int, Dict[str, str], bytes]:
    """One HTTP request: ``(status, headers with lower-case names, body)``; HTTP errors are answers too."""
    req = urllib.request.Request(url, data=body, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def build_offer(args: argparse.Namespace) -> ajp.JobOffer:
    """The signed offer: HMAC for a human sender (``--secret``), Ed25519 for an agent (``--private-key``)."""
    task = {"type": args.task_type, "instruction": args.instruction}
    now = datetime.now(timezone.utc)
    if args.private_key:
        sender = {"type": "agent", "provenance_id": args.provenance_id, "declaration_url": args.declaration_url}
        return ajp.new_offer(sender=sender, to=args.to, task=task, now=now, job_id=args.job_id,
                             private_key=Ed25519PrivateKey.from_string(args.private_key))
    return ajp.new_offer(sender={"type": "human", "id": args.sender_id}, to=args.to, task=task, now=now,
                         job_id=args.job_id, secret=args.secret)


def report(step: str, answer: Tuple[int, Dict[str, str], bytes]) -> Any:
    status, headers, body = answer
    doc = json.loads(body) if body else None
    print(json.dumps({"step": step, "status": status, "worker": headers.get("x-worker"), "body": doc}))
    return doc


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("url", help="the receiver's base URL")
    parser.add_argument("--to", required=True, help="the receiver's provenance id")
    parser.add_argument("--secret", help="HMAC secret (human sender)")
    parser.add_argument("--sender-id", default="user_example", help="from.id of a human sender")
    parser.add_argument("--private-key", help="Ed25519 private key, base64 PKCS#8 (agent sender)")
    parser.add_argument("--provenance-id", help="from.provenance_id of an agent sender")
    parser.add_argument("--declaration-url", help="from.declaration_url of an agent sender")
    parser.add_argument("--task-type", default="summarise")
    parser.add_argument("--instruction", default="Summarise the attached notes.")
    parser.add_argument("--job-id", default=None)
    args = parser.parse_args(argv)
    if (args.secret is None) == (args.private_key is None):
        parser.error("give --secret (human sender) or --private-key (agent sender)")
    offer = build_offer(args)
    base = args.url.rstrip("/")
    sent = report("POST /jobs", request("POST", base + "/jobs", offer.to_json()))
    if not sent or sent.get("status") != "accepted":
        return 1
    for _ in range(20):
        status = report(f"GET /jobs/{offer.job_id}", request("GET", f"{base}/jobs/{offer.job_id}"))
        if status and status.get("status") in ("completed", "failed", "rejected", "expired"):
            break
        time.sleep(0.25)
    else:
        return 1
    acked = report("POST ack", request("POST", f"{base}/jobs/{offer.job_id}/ack", b'{"received":true}'))
    return 0 if acked == {"settled": True} and status.get("status") == "completed" else 1


if __name__ == "__main__":
    sys.exit(main())
