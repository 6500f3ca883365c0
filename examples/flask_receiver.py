"""An AJP receiver on Flask (WSGI, threads): ``gunicorn -w 2 --threads 4 flask_receiver:app``.

The three AJP endpoints, each answered by ``ajp.Receiver`` (status, headers, body bytes copied
into Flask's ``Response``); the policy and the shared state are in ``receiver_setup.py``.
"""

from __future__ import annotations

from datetime import datetime, timezone

from flask import Flask, Response, request

import receiver_setup as setup
from ajpcore import ajp

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = setup.MAX_BODY  # larger bodies: 413 before any parsing
receiver = setup.build_receiver(asynchronous=False)
jobs = setup.jobs()


def _response(answer: ajp.HttpAnswer) -> Response:
    return Response(answer.body, answer.status, headers=setup.worker_headers(answer))


@app.post("/jobs")
def post_jobs() -> Response:
    answer = receiver.answer_offer(request.get_data(), now=datetime.now(timezone.utc))
    if answer.accepted and answer.received is not None:
        jobs.start(answer.received.offer)  # a duplicate is not run again
    return _response(answer)


@app.get("/jobs/<job_id>")
def get_job(job_id: str) -> Response:
    return _response(receiver.answer_status(job_id, jobs.status(job_id)))


@app.post("/jobs/<job_id>/ack")
def post_ack(job_id: str) -> Response:
    answer = receiver.answer_ack(job_id, request.get_data(), known=jobs.status(job_id) is not None)
    if answer.ack is not None and answer.ack.received:
        jobs.ack(job_id)
    return _response(answer)
