"""An AJP receiver on Flask (WSGI, threads): ``gunicorn -w 2 --threads 4 flask_receiver:app``.

The three AJP endpoints are ``ajpcore.ajp.adapters.wsgi_app``, mounted under ``/ajp`` with werkzeug's
``DispatcherMiddleware`` (the agent's AJP base URL is ``http://host:port/ajp``): it checks the
Content-Type, reads the body up to the Receiver's bound, and answers with ``ajp.Receiver``; Flask
keeps its own routes beside it. The policy, the shared state and the job table are in
``receiver_setup.py``.
"""

from __future__ import annotations

from typing import Dict

from flask import Flask
from werkzeug.middleware.dispatcher import DispatcherMiddleware

import receiver_setup as setup
from ajpcore.ajp import adapters

app = Flask(__name__)
receiver = setup.build_receiver(asynchronous=False)
jobs = setup.jobs()

# accept(received) returns once the job is stored; a duplicate (an honest retry) is never passed to it.
ajp_app = adapters.wsgi_app(receiver, accept=jobs.accept, status=jobs.status, ack=jobs.ack,
                            headers=setup.worker_headers)
app.wsgi_app = DispatcherMiddleware(app.wsgi_app, {"/ajp": ajp_app})  # type: ignore[method-assign]


@app.get("/health")
def health() -> Dict[str, str]:
    return {"status": "ok"}
