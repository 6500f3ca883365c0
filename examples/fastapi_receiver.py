"""An AJP receiver on FastAPI (asyncio): ``uvicorn fastapi_receiver:app --workers 2``.

The three AJP endpoints are ``ajpcore.ajp.adapters.asgi_app``, mounted under ``/ajp`` (the agent's
AJP base URL is ``http://host:port/ajp``): it checks the Content-Type, reads the body up to the
Receiver's bound, and answers with ``ajp.Receiver``; this app keeps its own routes beside it. The
policy, the shared state and the job table are in ``receiver_setup.py``.
"""

from __future__ import annotations

from typing import Dict

from fastapi import FastAPI

import receiver_setup as setup
from ajpcore.ajp import adapters

app = FastAPI(title="AJP receiver (ajpcore example)")
receiver = setup.build_receiver(asynchronous=True)
jobs = setup.jobs()

# accept(received) returns once the job is stored; a duplicate (an honest retry) is never passed to it.
app.mount("/ajp", adapters.asgi_app(receiver, accept=jobs.accept, status=jobs.status, ack=jobs.ack,
                                    headers=setup.worker_headers))


@app.get("/health")
async def health() -> Dict[str, str]:
    return {"status": "ok"}
