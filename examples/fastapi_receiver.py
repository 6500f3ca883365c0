"""An AJP receiver on FastAPI (asyncio): ``uvicorn fastapi_receiver:app --workers 2``.

The three AJP endpoints, each answered by ``ajp.Receiver`` (status, headers, body bytes copied
into FastAPI's ``Response``); the policy and the shared state are in ``receiver_setup.py``.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

from fastapi import FastAPI, Request, Response

import receiver_setup as setup

app = FastAPI(title="AJP receiver (ajpcore example)")
receiver = setup.build_receiver(asynchronous=True)
jobs = setup.jobs()


async def _body(request: Request) -> bytes | None:
    """The request body, or None when it is larger than ``setup.MAX_BODY`` (read no further)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > setup.MAX_BODY:
            return None
    return body


_TOO_LARGE = Response(b'{"error":"Request body too large"}', 413, media_type="application/json")


@app.post("/jobs")
async def post_jobs(request: Request) -> Response:
    body = await _body(request)
    if body is None:
        return _TOO_LARGE
    answer = await receiver.answer_offer_async(body, now=datetime.now(timezone.utc))
    if answer.accepted and answer.received is not None:
        await asyncio.to_thread(jobs.start, answer.received.offer)  # a duplicate is not run again
    return Response(answer.body, answer.status, headers=setup.worker_headers(answer))


@app.get("/jobs/{job_id}")
async def get_job(job_id: str) -> Response:
    answer = receiver.answer_status(job_id, await asyncio.to_thread(jobs.status, job_id))
    return Response(answer.body, answer.status, headers=setup.worker_headers(answer))


@app.post("/jobs/{job_id}/ack")
async def post_ack(job_id: str, request: Request) -> Response:
    body = await _body(request)
    if body is None:
        return _TOO_LARGE
    known = await asyncio.to_thread(jobs.status, job_id) is not None
    answer = receiver.answer_ack(job_id, body, known=known)
    if answer.ack is not None and answer.ack.received:
        await asyncio.to_thread(jobs.ack, job_id)
    return Response(answer.body, answer.status, headers=setup.worker_headers(answer))
