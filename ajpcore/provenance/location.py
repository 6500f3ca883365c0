"""Where a declaration was served from, against the ``provenance_id`` it names.

The rules follow the reference verifier as of provenance-protocol/provenance-protocol
commit e921359 (structural comparison, percent-decoded path segments, port 443
only) and the Provenance SPEC's ``provenance:domain:`` identifiers; ajpcore is
stricter where a fetcher and ``urlsplit`` could read one URL two ways (see
``check_location``).  The npm package ``provenance-protocol`` 0.3.0 compares
differently (see the package docstring): a URL it calls ``mismatch`` or
``unchecked`` can be a ``match`` here.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple
from urllib.parse import unquote, urlsplit

__all__ = ["parse_provenance_id", "check_location"]

_PROVENANCE_ID = re.compile(r"provenance:([a-z0-9-]+):(.+)", re.IGNORECASE | re.DOTALL)
# Characters a WHATWG URL parser (what fetches the file) reads differently from urlsplit:
# whitespace and controls are stripped, "\\" is a path separator, non-ASCII hosts are IDNA-mapped.
_AMBIGUOUS_URL_CHARS = re.compile(r"[\x00-\x20\x7f\\]|[^\x00-\x7f]")
_PLAIN_HOST = re.compile(r"[a-z0-9.-]+")


def parse_provenance_id(provenance_id: object) -> Optional[Tuple[str, str]]:
    """``(platform, path)`` of ``provenance:<platform>:<path>`` (platform lowercased), else None.

    No trimming: an id with surrounding whitespace is not an id.
    """
    if not isinstance(provenance_id, str):
        return None
    match = _PROVENANCE_ID.fullmatch(provenance_id)
    if match is None:
        return None
    return match.group(1).lower(), match.group(2)


def _path_segments(path: str) -> List[str]:
    return [unquote(s).lower() for s in path.split("/") if s]


def _github_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    # github.com/<owner>/<repo>/..., raw.githubusercontent.com/<owner>/<repo>/<ref>/...,
    # api.github.com/repos/<owner>/<repo>/...
    if host in ("github.com", "www.github.com", "raw.githubusercontent.com"):
        return segs[:2]
    if host == "api.github.com":
        return segs[1:3] if segs[:1] == ["repos"] else None
    return None


def _huggingface_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host not in ("huggingface.co", "www.huggingface.co"):
        return None
    if segs[:1] and segs[0] in ("spaces", "datasets", "models"):
        return segs[1:3]
    return segs[:2]


def _npm_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host in ("npmjs.com", "www.npmjs.com"):
        if segs[:1] != ["package"]:
            return None
        segs = segs[1:]
    elif host != "registry.npmjs.org":
        return None
    if segs and segs[0].startswith("@"):  # scoped: @scope/name, or one %2f-encoded segment
        return segs[0].split("/") if "/" in segs[0] else segs[:2]
    return segs[:1]


def _pypi_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host != "pypi.org":
        return None
    return segs[1:2] if segs[:1] == ["project"] else None


_PLATFORM_IDENTITY = {
    "github": _github_identity,
    "huggingface": _huggingface_identity,
    "npm": _npm_identity,
    "pypi": _pypi_identity,
}
# The hosts each platform serves declarations from; any other host is "unchecked".
_HOST_PLATFORM = {
    "github.com": "github",
    "www.github.com": "github",
    "raw.githubusercontent.com": "github",
    "api.github.com": "github",
    "huggingface.co": "huggingface",
    "www.huggingface.co": "huggingface",
    "npmjs.com": "npm",
    "www.npmjs.com": "npm",
    "registry.npmjs.org": "npm",
    "pypi.org": "pypi",
}


def check_location(provenance_id: object, retrieved_from: object) -> str:
    """Does the URL a declaration was fetched from agree with its ``provenance_id``?

    Returns ``"match"``, ``"mismatch"`` or ``"unchecked"`` (the id or the URL
    cannot be interpreted unambiguously, the URL is not https, or the host is
    not one the id's platform publishes on; never reported as agreement).

    - ``provenance:domain:<host>[/<path>]``: the URL host equals ``<host>``
      exactly (case-insensitive; a subdomain or parent is a mismatch), the port
      is absent or 443, and the URL path starts with ``<path>``'s segments.
    - ``provenance:github:<owner>/<repo>``: served from github.com,
      raw.githubusercontent.com or api.github.com/repos with ``<owner>/<repo>``
      as the first two path segments (another platform's host is a mismatch;
      an unknown host is unchecked).  Likewise huggingface, npm and pypi.
    """
    parsed = parse_provenance_id(provenance_id)
    if parsed is None or not isinstance(retrieved_from, str):
        return "unchecked"
    platform, id_path = parsed
    if _AMBIGUOUS_URL_CHARS.search(retrieved_from):
        return "unchecked"
    try:
        url = urlsplit(retrieved_from)
        port = url.port
    except ValueError:
        return "unchecked"
    host = (url.hostname or "").lower()
    if url.scheme.lower() != "https" or not _PLAIN_HOST.fullmatch(host) or "@" in url.netloc:
        return "unchecked"
    port_ok = port is None or port == 443
    segs = _path_segments(url.path)
    if "." in segs or ".." in segs:
        return "unchecked"  # a fetcher resolves dot segments (RFC 3986 §5.2.4); a path check must not guess

    if platform == "domain":
        declared = [s for s in id_path.split("/") if s]
        if not declared:
            return "unchecked"
        if host != declared[0].lower() or not port_ok:
            return "mismatch"
        want = [s.lower() for s in declared[1:]]
        return "match" if segs[: len(want)] == want else "mismatch"

    url_platform = _HOST_PLATFORM.get(host)
    if url_platform is None:
        return "unchecked"
    if url_platform != platform or not port_ok:
        return "mismatch"
    expected = [s for s in id_path.lower().split("/") if s]
    if not expected:
        return "unchecked"
    got = _PLATFORM_IDENTITY[url_platform](host, segs)
    return "match" if got == expected else "mismatch"
