"""Drop-in HTTP applications of the three AJP endpoints: an ASGI one and a WSGI one, standard library only.

``asgi_app(receiver, accept=..., status=...)`` and ``wsgi_app(...)`` build, from an ``ajp.Receiver``
and the host's job callbacks, an application that answers ``POST /jobs``, ``GET /jobs/{job_id}`` and
``POST /jobs/{job_id}/ack`` (relative to where it is mounted).  FastAPI and Starlette mount the ASGI
one (``app.mount("/ajp", asgi_app(...))``), Flask the WSGI one (werkzeug's ``DispatcherMiddleware``);
uvicorn, hypercorn, gunicorn or any WSGI server can also run them alone.

Before the Receiver reads anything: the ``Content-Type`` rule (``check_content_type``: 415), then the
body bound as a streaming read limit (``receiver.max_body_bytes``: a ``Content-Length`` over it, or a
body that grows past it, is 413 and no more is read).  Then the Receiver's answers: 202 (and the
duplicate 202 of an honest retry), 400, 401, 403, 409, 429 and 503 with ``Retry-After``.  A path that
is none of the three is 404, a method the path does not take 405 (with ``Allow``); every refusal body
is an ``ErrorBody``.

The host's callbacks (sync functions, or ``async`` ones for the ASGI application):

- ``accept(received)``: a new accepted offer (a ``ReceivedOffer``; never called for a duplicate).  Take
  the job (queue it, store it) and return once the host has it; the 202 is sent after it returns.  An
  exception it raises propagates: the server answers 500.
- ``status(job_id)``: the job's ``JobStatus`` (or its members, as ``Receiver.answer_status`` takes
  them), or None for a job this host does not know (404); also decides whether an ack's job is known.
- ``ack(job_id, ack)`` (optional): the sender confirmed it received the result (``ack.received`` is
  True); not called for ``{"received": false}`` or a malformed ack.

From the ASGI application a sync callback runs in a worker thread (it may block on a database), an
``async`` one is awaited.  ``headers(answer)`` (optional) returns extra response headers for an answer
(a request id, a worker name); ``clock()`` (optional, default ``datetime.now(timezone.utc)``) is the
``now`` each offer is judged at.
"""

from __future__ import annotations

import asyncio
import inspect
from datetime import datetime, timezone
from http import HTTPStatus
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from ..errors import AjpError, PayloadTooLarge
from ._answers import HttpAnswer, refusal_answer
from ._messages import Ack, ErrorBody, JobStatus
from ._pipeline import ReceivedOffer, check_content_type
from ._receiver import Receiver

__all__ = ["asgi_app", "wsgi_app", "JobLookup"]

JobLookup = Callable[[str], Union[JobStatus, Mapping[str, Any], None]]
"""``status(job_id)``: the job's JobStatus (or its members), or None when the host does not know it."""

_OFFER, _STATUS, _ACK = "offer", "status", "ack"
_READ_CHUNK = 64 * 1024


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _route(method: str, path: str) -> Union[Tuple[str, str], HttpAnswer]:
    """The endpoint and job id of a request, or the 404/405 answer.  ``path`` is relative to the mount."""
    parts = path.strip("/").split("/") if path.strip("/") else []
    if parts == ["jobs"]:
        endpoint, job_id, allowed = _OFFER, "", "POST"
    elif len(parts) == 2 and parts[0] == "jobs" and parts[1]:
        endpoint, job_id, allowed = _STATUS, parts[1], "GET"
    elif len(parts) == 3 and parts[0] == "jobs" and parts[1] and parts[2] == "ack":
        endpoint, job_id, allowed = _ACK, parts[1], "POST"
    else:
        return _plain(404, "Not found", "NOT_FOUND", "this receiver answers POST /jobs, GET /jobs/{id}, "
                      "POST /jobs/{id}/ack")
    if method != allowed and not (allowed == "GET" and method == "HEAD"):
        answer = _plain(405, "Method not allowed", "METHOD_NOT_ALLOWED", f"this endpoint takes {allowed}")
        return HttpAnswer(405, dict(answer.headers, allow=allowed), answer.body)
    return endpoint, job_id


def _plain(status: int, error: str, code: str, reason: str) -> HttpAnswer:
    body = ErrorBody(error=error, code=code, reason=reason)
    return HttpAnswer(status, {"content-type": "application/json"}, body.to_json())


def _refused(exc: AjpError, endpoint: str) -> HttpAnswer:
    answer = refusal_answer(exc, message="Ack" if endpoint == _ACK else "JobOffer")
    if isinstance(exc, PayloadTooLarge):  # the rest of the body was not read: this connection is done
        return HttpAnswer(answer.status, dict(answer.headers, connection="close"), answer.body)
    return answer


def _precheck(endpoint: str, content_type: Optional[str], length: Optional[str], limit: int) -> Optional[HttpAnswer]:
    """The Content-Type rule, then a declared ``Content-Length`` over the bound: the answers given unread."""
    try:
        check_content_type(content_type)
        if length is not None and length.strip().isdigit() and int(length) > limit:
            raise PayloadTooLarge(int(length), limit)
    except AjpError as exc:
        return _refused(exc, endpoint)
    return None


def _with(answer: HttpAnswer, extra: Optional[Callable[[HttpAnswer], Mapping[str, str]]]) -> Dict[str, str]:
    headers = dict(answer.headers)
    if extra is not None:
        headers.update(extra(answer))
    headers["content-length"] = str(len(answer.body))
    return headers


def _checked_callbacks(receiver: Any, accept: Any, status: Any, ack: Any) -> None:
    if not isinstance(receiver, Receiver):
        raise TypeError(f"receiver must be an ajp.Receiver, got `{type(receiver).__name__}`")
    for name, callback in (("accept", accept), ("status", status)):
        if not callable(callback):
            raise TypeError(f"`{name}` must be a function (see ajpcore.ajp.adapters)")
    if ack is not None and not callable(ack):
        raise TypeError("`ack` must be a function (job_id, ack) or None")


# -- ASGI ------------------------------------------------------------------------------------------


class _Disconnected(Exception):
    """The client went away before its body was read: nothing to answer."""


async def _call(callback: Callable[..., Any], *args: Any) -> Any:
    """A host callback from the event loop: awaited when async, else run in a worker thread."""
    if inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(getattr(callback, "__call__", None)):
        return await callback(*args)
    result = await asyncio.to_thread(callback, *args)
    if inspect.isawaitable(result):
        result = await result
    return result


async def _asgi_body(receive: Callable[[], Awaitable[Mapping[str, Any]]], limit: int) -> bytes:
    """The request body, read up to ``limit`` bytes: ``PayloadTooLarge`` as soon as it grows past it."""
    chunks: List[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(None, limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def asgi_app(
    receiver: Receiver,
    *,
    accept: Callable[[ReceivedOffer], Any],
    status: JobLookup,
    ack: Optional[Callable[[str, Ack], Any]] = None,
    headers: Optional[Callable[[HttpAnswer], Mapping[str, str]]] = None,
    clock: Callable[[], datetime] = _utc_now,
) -> Callable[..., Awaitable[None]]:
    """An ASGI 3 application answering the three AJP endpoints with ``receiver`` (see the module's text).

    Offers go through ``receiver.answer_offer_async`` (async stores awaited, blocking ones in a thread).
    Raises ``TypeError`` for a ``receiver`` that is not an ``ajp.Receiver`` or callbacks that are not
    callable.
    """
    _checked_callbacks(receiver, accept, status, ack)
    limit = receiver.max_body_bytes

    async def answer(endpoint: str, job_id: str, scope: Mapping[str, Any], receive: Any) -> HttpAnswer:
        if endpoint == _STATUS:
            return receiver.answer_status(job_id, await _call(status, job_id))
        fields = _asgi_headers(scope)
        early = _precheck(endpoint, fields.get("content-type"), fields.get("content-length"), limit)
        if early is not None:
            return early
        try:
            body = await _asgi_body(receive, limit)
        except PayloadTooLarge as exc:
            return _refused(exc, endpoint)
        if endpoint == _OFFER:
            # run=: the pair stays pending until `accept` returns (a 202 means the host has the job);
            # an exception or a cancellation releases it, so the sender's retry is admitted anew.
            return await receiver.answer_offer_async(body, now=clock(), run=lambda received: _call(accept, received))
        known = await _call(status, job_id) is not None
        acked = receiver.answer_ack(job_id, body, known=known)
        if ack is not None and acked.ack is not None and acked.ack.received:
            await _call(ack, job_id, acked.ack)
        return acked

    async def app(scope: Mapping[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if kind != "http":
            raise RuntimeError(f"the AJP application serves HTTP only, not `{kind}`")
        path = scope["path"]
        root = scope.get("root_path", "")
        if root and path.startswith(root):  # a mount that kept the prefix in `path` (Starlette does)
            path = path[len(root):]
        routed = _route(scope["method"], path)
        if isinstance(routed, HttpAnswer):
            result = routed
        else:
            try:
                result = await answer(routed[0], routed[1], scope, receive)
            except _Disconnected:
                return
        sent = _with(result, headers)
        await send({"type": "http.response.start", "status": result.status,
                    "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in sent.items()]})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else result.body})

    return app


def _asgi_headers(scope: Mapping[str, Any]) -> Dict[str, str]:
    """The request headers that matter here, by lower-case name (the last of a repeated one)."""
    found: Dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = bytes(name).decode("latin-1").lower()
        if key in ("content-type", "content-length"):
            if key in found:  # a repeated Content-Type is not one media type
                found[key] = "\x00"
            else:
                found[key] = bytes(value).decode("latin-1")
    return found


# -- WSGI ------------------------------------------------------------------------------------------


def _wsgi_body(environ: Mapping[str, Any], limit: int) -> bytes:
    """The request body as PEP 3333 allows reading it, up to ``limit`` bytes (``PayloadTooLarge`` past it).

    With a ``Content-Length``, exactly that many bytes (the caller refused a larger one unread); without
    one, to the end when the server says the input is terminated (``wsgi.input_terminated``: chunked
    bodies under gunicorn, waitress...), else nothing.
    """
    stream = environ["wsgi.input"]
    length = environ.get("CONTENT_LENGTH", "")
    wanted = int(length) if length.strip().isdigit() else None
    if wanted is None and not environ.get("wsgi.input_terminated"):
        return b""
    chunks: List[bytes] = []
    size = 0
    while wanted is None or size < wanted:
        # never more than one byte past the bound, nor past the declared length
        step = min(_READ_CHUNK, limit + 1 - size, (wanted - size) if wanted is not None else _READ_CHUNK)
        chunk = stream.read(step)
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(None, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _wsgi_path(environ: Mapping[str, Any]) -> str:
    """PATH_INFO as text: PEP 3333 hands it over as bytes decoded as latin-1."""
    raw = environ.get("PATH_INFO", "") or ""
    try:
        return str(raw.encode("latin-1").decode("utf-8"))
    except UnicodeError:
        return str(raw)


def wsgi_app(
    receiver: Receiver,
    *,
    accept: Callable[[ReceivedOffer], Any],
    status: JobLookup,
    ack: Optional[Callable[[str, Ack], Any]] = None,
    headers: Optional[Callable[[HttpAnswer], Mapping[str, str]]] = None,
    clock: Callable[[], datetime] = _utc_now,
) -> Callable[[Dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
    """A WSGI (PEP 3333) application answering the three AJP endpoints with ``receiver`` (see the module's
    text).  Offers go through ``receiver.answer_offer``: its stores and resolver must be sync ones.
    Raises ``TypeError`` for a ``receiver`` that is not an ``ajp.Receiver`` or callbacks that are not
    callable.
    """
    _checked_callbacks(receiver, accept, status, ack)
    limit = receiver.max_body_bytes

    def answer(endpoint: str, job_id: str, environ: Mapping[str, Any]) -> HttpAnswer:
        if endpoint == _STATUS:
            return receiver.answer_status(job_id, status(job_id))
        early = _precheck(endpoint, environ.get("CONTENT_TYPE"), environ.get("CONTENT_LENGTH") or None, limit)
        if early is not None:
            return early
        try:
            body = _wsgi_body(environ, limit)
        except PayloadTooLarge as exc:
            return _refused(exc, endpoint)
        if endpoint == _OFFER:
            return receiver.answer_offer(body, now=clock(), run=accept)  # pending until `accept` returns
        acked = receiver.answer_ack(job_id, body, known=status(job_id) is not None)
        if ack is not None and acked.ack is not None and acked.ack.received:
            ack(job_id, acked.ack)
        return acked

    def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        routed = _route(method, _wsgi_path(environ))
        result = routed if isinstance(routed, HttpAnswer) else answer(routed[0], routed[1], environ)
        sent = _with(result, headers)
        start_response(f"{result.status} {HTTPStatus(result.status).phrase}", list(sent.items()))
        return [b"" if method == "HEAD" else result.body]

    return app

