"""The location check and the declaration URL gate against a reference decode-then-normalize.

The input builds ``https://<host><path>`` for the id ``provenance:domain:example.com/agents/alice``:
the first byte picks the host (the id's, a spelling of it, another, a special-use or numeric
one), the rest writes the path piece by piece from an alphabet of what file servers read
specially (``/``, ``.``, ``..``, ``%2F``, ``%2e``, ``%5C``, ``%3B``, ``;``, ``%25``, ``%00``,
``\\``, letters, ``alice``/``mallory`` ...) or as raw bytes.

The reference is what a file server serves for that path, under three readings: Python's
``http.server`` (percent-decode, then ``posixpath.normpath``), IIS (also ``\\`` as ``/``), and
Tomcat/Jetty (``;...`` dropped from each segment before ``..`` is resolved).  Whenever
``check_location`` answers ``match``, every reading must land under ``/agents/alice`` on the
id's host; ``check_declaration_url`` must pass exactly when ``check_location`` answers
``match`` for a URL the gate's syntax accepts, and never raise anything but
``SenderIdentityError``.  The location check is pure Python: ``twin`` is not used (set
``AJPCORE_FUZZ_INSTRUMENT_PURE=1`` for coverage feedback inside ajpcore).
"""

import os
import posixpath
import re
import sys
from urllib.parse import unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Bytes, fuzz_main  # noqa: E402

import ajpcore  # noqa: E402
from ajpcore.provenance import check_declaration_url, check_location  # noqa: E402

ID = "provenance:domain:example.com/agents/alice"
HOME = "/agents/alice"
HOSTS = ("example.com", "EXAMPLE.com", "example.com:443", "example.com:8443", "www.example.com", "example.com.",
         "localhost.localdomain", "127.0.0.1", "exa%6Dple.com", "user@example.com", "example.org", "[::1]")
PIECES = ("/", "/", "/", ".", "..", "%2F", "%2f", "%2e", "%2E", "%5C", "%5c", "%3B", "%3b", ";", "%25", "%00",
          "\\", "agents", "alice", "mallory", "provenance.json", "a", "%61", "?", "#", "%", "%2", "//", "/./", "/../")


def _url(raw: bytes) -> str:
    src = Bytes(raw)
    host = HOSTS[src.byte() % len(HOSTS)]
    path = "/agents/alice" if src.byte() & 1 else ""
    while src.left():
        b = src.byte()
        if b < 200:
            path += PIECES[b % len(PIECES)]
        else:
            path += src.take(1 + b % 4).decode("latin-1")
    return f"https://{host}{path}"


def _served(path: str, backslash: bool, params: bool) -> str:
    """The file path a server of this reading resolves ``path`` (the URL's path, still encoded) to."""
    decoded = unquote(path, errors="surrogateescape")
    if backslash:
        decoded = decoded.replace("\\", "/")
    if params:
        decoded = "/".join(seg.split(";", 1)[0] for seg in decoded.split("/"))
    words = posixpath.normpath("/" + decoded).split("/")
    return "/" + "/".join(w for w in words if w)  # as http.server joins them: empty words name nothing


def _under_home(served: str) -> bool:
    return served == HOME or served.startswith(HOME + "/")


def check(raw: bytes, twin) -> None:
    url = _url(raw)
    verdict = check_location(ID, url)
    assert verdict in ("match", "mismatch", "unchecked"), verdict
    if verdict == "match":
        parts = urlsplit(url)
        assert (parts.hostname or "").lower() == "example.com", url
        for backslash in (False, True):
            for params in (False, True):
                served = _served(parts.path, backslash, params)
                assert _under_home(served), f"{url!r} is a match, but a server reads it as {served!r}"
    try:
        check_declaration_url(url, ID)
        gate = True
    except ajpcore.SenderIdentityError as exc:
        gate = False
        assert exc.status == 403 and re.fullmatch(r"[A-Z_]+", exc.code), exc
    assert not gate or verdict == "match", f"the gate passed {url!r}, which check_location calls {verdict}"


def _instrument(atheris, *modules) -> int:
    """Coverage feedback for the functions and methods defined in ``modules`` (how many)."""
    import inspect

    count = 0
    for module in modules:
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) != module.__name__:
                continue
            functions = [value] if inspect.isfunction(value) else list(vars(value).values()) if inspect.isclass(value) else []
            for function in functions:
                if inspect.isfunction(function):
                    atheris.instrument_func(function)
                    count += 1
    return count


if __name__ == "__main__":
    # The gate and the URL reading are Python code (no native edge reports coverage here):
    # instrument location.py and urllib.parse, the code fuzzed, so libFuzzer sees their branches.
    # (atheris.instrument_all() instruments every loaded function, about 4,800: a minute of startup.)
    import urllib.parse

    import atheris

    from ajpcore.provenance import location

    _instrument(atheris, location, urllib.parse)
    fuzz_main(check)
