"""Provenance ids in their one spelling, where a declaration was served from, and the URL gate.

The rules follow the reference verifier as of provenance-protocol/provenance-protocol
commit e921359 (structural comparison, percent-decoded path segments, port 443
only) and the Provenance SPEC's ``provenance:domain:`` identifiers; ajpcore is
stricter where a fetcher and ``urlsplit`` could read one URL two ways, and where two
spellings could name one identity (see ``canonical_provenance_id`` and
``check_location``).  The npm package ``provenance-protocol`` 0.3.0 compares
differently (see the package docstring): a URL it calls ``mismatch`` or
``unchecked`` can be a ``match`` here.

What each platform folds (docs/provenance-identity.md has the sources):

- ``domain``: the host only (RFC 3986 §6.2.2.1: scheme and host are case-insensitive);
  the path is case-sensitive, as every HTTP path is.
- ``github``: owner and repository names (GitHub resolves them case-insensitively).
- ``huggingface``: owner and repository names (the Hub resolves repo ids
  case-insensitively).
- ``npm``: nothing.  The registry is case-sensitive; new names must be lowercase, but
  legacy mixed-case names (``JSONStream``) exist and are distinct packages.
- ``pypi``: the PEP 503 normalization (case, and runs of ``-``, ``_``, ``.``), which is how
  PyPI itself compares project names.
- any other platform: nothing.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Callable, Dict, List, Optional, Tuple
from urllib.parse import unquote, urlsplit

from ..errors import SenderIdentityError
from ._payload import describe

__all__ = [
    "parse_provenance_id",
    "canonical_provenance_id",
    "require_canonical_provenance_id",
    "check_location",
    "check_declaration_url",
]

_PROVENANCE_ID = re.compile(r"provenance:([a-z0-9-]+):(.+)", re.IGNORECASE | re.DOTALL)
# Characters a WHATWG URL parser (what fetches the file) reads differently from urlsplit:
# whitespace and controls are stripped, "\\" is a path separator, non-ASCII hosts are IDNA-mapped.
_AMBIGUOUS_URL_CHARS = re.compile(r"[\x00-\x20\x7f\\]|[^\x00-\x7f]")
_PLAIN_HOST = re.compile(r"[a-z0-9.-]+")
# RFC 1123 §2.1 host name labels, lowercase (the canonical spelling; RFC 4343: case-insensitive).
_DNS_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# A path segment of an id: RFC 3986 pchar without pct-encoded, so a segment has one spelling
# (the URL's segments are compared after percent-decoding).
_ID_SEGMENT = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@-]+")
# The WHATWG URL host parser reads a host whose last label is a number (decimal, or 0x-hex;
# octal is decimal digits with a leading 0) as an IPv4 address: "2852039166", "0x7f.1", "127.1".
_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")
_GITHUB_OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_NAME_CHARS = re.compile(r"[A-Za-z0-9._-]+")
_NPM_NAME = re.compile(r"[A-Za-z0-9_~!*'().-]+")  # what encodeURIComponent leaves alone
_PEP508_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)
_SCHEME_PORT = 443
# A URL path holding one of these is never a location match: a server decodes them into a
# separator ("/", "\\") or a path parameter (";"), which ends a segment after the gate looked.
_ENCODED_SEPARATOR = re.compile(r"%(?:2[fF]|5[cC]|3[bB])")
_UNSAFE_SEGMENT_CHARS = re.compile(r"[/\\;\x00-\x1f\x7f]")
# Special-use names no public declaration is served from: RFC 6761 (localhost, test, invalid,
# example), RFC 6762 (local), RFC 7686 (onion), RFC 8375 (home.arpa; and .arpa is
# infrastructure only), RFC 9476 (alt), and ICANN's reserved private-use "internal" (2024).
# "localdomain" (with "localdomain4"/"localdomain6"): the suffix RHEL-family hosts files map to
# loopback (localhost.localdomain), never delegated in the DNS root.
_SPECIAL_USE_TLDS = frozenset({
    "localhost", "local", "test", "invalid", "example", "onion", "arpa", "alt", "internal",
    "localdomain", "localdomain4", "localdomain6",
})
_BRACKETED_HOST = re.compile(r"https://\[", re.IGNORECASE)  # an IPv6 (or IPvFuture) literal
_DECLARATION_URL = re.compile(r"https://(?P<host>[^/?#:@]*)(?::(?P<port>[0-9]*))?(?P<rest>[/?#].*)?", re.IGNORECASE | re.DOTALL)


def parse_provenance_id(provenance_id: object) -> Optional[Tuple[str, str]]:
    """``(platform, path)`` of ``provenance:<platform>:<path>`` (platform lowercased), else None.

    No trimming: an id with surrounding whitespace is not an id.  This reads any
    spelling; ``canonical_provenance_id`` says which spelling an identity uses.
    """
    if not isinstance(provenance_id, str):
        return None
    match = _PROVENANCE_ID.fullmatch(provenance_id)
    if match is None:
        return None
    return match.group(1).lower(), match.group(2)


class _NotAnId(Exception):
    pass


def _is_numeric_host(host: str) -> bool:
    """The WHATWG "ends in a number" rule: such a host is an IPv4 address to a fetcher."""
    labels = host.split(".")
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()
    return _NUMERIC_LABEL.fullmatch(labels[-1]) is not None


def _is_ip_literal(host: str) -> bool:
    if _is_numeric_host(host):
        return True
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _is_dns_name(host: str) -> bool:
    """A lowercase RFC 1123 host name that no URL parser reads as an IP address; no trailing dot."""
    if not host or len(host) > 253 or _is_numeric_host(host):
        return False
    return all(_DNS_LABEL.fullmatch(label) for label in host.split("."))


def _plain_segments(segments: List[str]) -> List[str]:
    for segment in segments:
        if not _ID_SEGMENT.fullmatch(segment) or segment in (".", ".."):
            raise _NotAnId(f"segment {describe(segment)} is not a plain path segment")
    return segments


def _domain_path(segments: List[str]) -> List[str]:
    host = segments[0].lower()
    if host.endswith(".") and len(host) > 1:
        host = host[:-1]  # the root label: the same DNS name
    if not _is_dns_name(host):
        raise _NotAnId(f"{describe(segments[0])} is not a DNS host name (an IP address or a malformed name)")
    return [host] + _plain_segments(segments[1:])


def _owner_name(segments: List[str], owner: "re.Pattern[str]", what: str) -> List[str]:
    if len(segments) != 2:
        raise _NotAnId(f"a {what} id is <owner>/<name>")
    if not owner.fullmatch(segments[0]) or not _NAME_CHARS.fullmatch(segments[1]) or segments[1] in (".", ".."):
        raise _NotAnId(f"{describe('/'.join(segments))} is not a {what} owner/name")
    return [s.lower() for s in segments]


def _github_path(segments: List[str]) -> List[str]:
    return _owner_name(segments, _GITHUB_OWNER, "github")


def _huggingface_path(segments: List[str]) -> List[str]:
    return _owner_name(segments, _NAME_CHARS, "huggingface")


def _npm_path(segments: List[str]) -> List[str]:
    scoped = segments[0].startswith("@")
    if len(segments) != (2 if scoped else 1):
        raise _NotAnId("an npm id is <name> or @<scope>/<name>")
    parts = [segments[0][1:]] + segments[1:] if scoped else segments
    if not all(_NPM_NAME.fullmatch(p) and p not in (".", "..") for p in parts):
        raise _NotAnId(f"{describe('/'.join(segments))} is not an npm package name")
    return segments  # case-sensitive: the registry keeps legacy mixed-case names apart


def _pep503(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pypi_path(segments: List[str]) -> List[str]:
    if len(segments) != 1 or not _PEP508_NAME.fullmatch(segments[0]):
        raise _NotAnId(f"{describe('/'.join(segments))} is not a PyPI project name (PEP 508)")
    return [_pep503(segments[0])]


_CANONICAL_PATH: Dict[str, Callable[[List[str]], List[str]]] = {
    "domain": _domain_path,
    "github": _github_path,
    "huggingface": _huggingface_path,
    "npm": _npm_path,
    "pypi": _pypi_path,
}


def _canonical(provenance_id: object) -> str:
    parsed = parse_provenance_id(provenance_id)
    if parsed is None:
        raise _NotAnId("it is not `provenance:<platform>:<path>`")
    platform, path = parsed
    segments = [s for s in path.split("/") if s]  # empty segments name nothing
    if not segments:
        raise _NotAnId("its path is empty")
    canonical = _CANONICAL_PATH.get(platform, _plain_segments)(segments)
    return f"provenance:{platform}:{'/'.join(canonical)}"


def canonical_provenance_id(provenance_id: object) -> str:
    """The one spelling of a provenance id: what identity checks compare, pins key and reports show.

    ``provenance:<platform>:<path>`` with the prefix and platform in lowercase, the path's
    empty segments dropped (``a//b/`` is ``a/b``), and the path folded exactly as the
    platform itself folds it:

    - ``domain:<host>[/<segment>...]``: the host lowercased (one trailing root dot
      dropped); it must be an RFC 1123 host name that no URL parser reads as an IP address
      (``169.254.169.254``, ``2852039166``, ``0x7f.1`` are not).  The segments keep their
      case and must be plain (unreserved, sub-delims, ``:`` or ``@``; no ``%``, no ``.``/``..``).
    - ``github:<owner>/<repo>``, ``huggingface:<owner>/<name>``: lowercased.
    - ``npm:<name>`` or ``npm:@<scope>/<name>``: as written (npm is case-sensitive).
    - ``pypi:<project>``: PEP 503-normalized (``Agent_Kit`` is ``agent-kit``).
    - any other platform: plain segments, as written.

    Examples: ``provenance:DOMAIN:AGENT.example.com/`` and ``provenance:domain:agent.example.com``
    are both ``provenance:domain:agent.example.com``; ``provenance:github:Alice/Agent`` is
    ``provenance:github:alice/agent``.  Raises ``SenderIdentityError`` (403, code
    ``PROVENANCE_ID_INVALID``) for anything that is not a provenance id of that form
    (not a string, surrounding whitespace, a host that is not a DNS name, ...).
    """
    try:
        return _canonical(provenance_id)
    except _NotAnId as exc:
        raise SenderIdentityError(
            f"{describe(provenance_id)} is not a provenance id: {exc}", "PROVENANCE_ID_INVALID"
        ) from None


def require_canonical_provenance_id(provenance_id: object) -> str:
    """``provenance_id`` itself when it is written in its canonical spelling; else a refusal.

    Identity is keyed by the exact id string (pins, replay guards, reports), so an id
    that is not its own ``canonical_provenance_id`` would be a second name for a
    pinned identity.  Raises ``SenderIdentityError`` (403): code
    ``PROVENANCE_ID_NOT_CANONICAL`` (the message names the canonical spelling), or
    ``PROVENANCE_ID_INVALID`` as ``canonical_provenance_id``.
    """
    canonical = canonical_provenance_id(provenance_id)
    if canonical != _plain(provenance_id):
        raise SenderIdentityError(
            f"provenance id {describe(provenance_id)} is not in canonical form: its one spelling is `{canonical}`",
            "PROVENANCE_ID_NOT_CANONICAL",
        )
    return canonical


def _plain(value: object) -> object:
    """A ``str`` subclass as the plain text it holds (its own ``__eq__`` must not decide identity)."""
    return str.__str__(value) if isinstance(value, str) else value


def _is_canonical(provenance_id: object) -> bool:
    try:
        return _canonical(provenance_id) == _plain(provenance_id)
    except _NotAnId:
        return False


def _url_segments(path: str) -> Optional[List[str]]:
    """Percent-decoded path segments, or None when a server could serve the path from elsewhere.

    The decision is on the decoded path, as the file server that serves the URL reads it:
    ``http.server`` and Go's ``FileServer`` decode ``%2F`` before resolving ``..``, IIS
    reads ``\\`` (``%5C``) as a separator, Tomcat and Jetty drop ``;...`` from a segment
    (``..;`` is ``..``).  So the path is refused when it holds ``%2F``, ``%5C`` or ``%3B``
    anywhere (any case), or a segment that is empty before the end (servers differ on
    ``//``), ``.`` or ``..`` once decoded (RFC 3986 §5.2.4), or that contains ``/``, ``\\``,
    ``;`` or a control once decoded.
    """
    if _ENCODED_SEPARATOR.search(path):
        return None
    raw = path.split("/")[1:]
    if raw and raw[-1] == "":
        raw.pop()
    if "" in raw:
        return None
    segs = [unquote(s) for s in raw]
    for seg in segs:
        if seg in (".", "..") or _UNSAFE_SEGMENT_CHARS.search(seg):
            return None
    return segs


def _github_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    # github.com/<owner>/<repo>/..., raw.githubusercontent.com/<owner>/<repo>/<ref>/...,
    # api.github.com/repos/<owner>/<repo>/...; GitHub folds the case of owner and repo.
    if host in ("github.com", "www.github.com", "raw.githubusercontent.com"):
        return [s.lower() for s in segs[:2]]
    if host == "api.github.com":
        return [s.lower() for s in segs[1:3]] if segs[:1] == ["repos"] else None
    return None


def _huggingface_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host not in ("huggingface.co", "www.huggingface.co"):
        return None
    if segs[:1] and segs[0] in ("spaces", "datasets", "models"):
        segs = segs[1:]
    return [s.lower() for s in segs[:2]]


def _npm_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host in ("npmjs.com", "www.npmjs.com"):
        if segs[:1] != ["package"]:
            return None
        segs = segs[1:]
    elif host != "registry.npmjs.org":
        return None
    if segs and segs[0].startswith("@"):  # scoped: @scope/name (the registry's @scope%2fname is unchecked)
        return segs[:2]
    return segs[:1]  # case-sensitive, as the registry


def _pypi_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host != "pypi.org":
        return None
    return [_pep503(segs[1])] if segs[:1] == ["project"] and len(segs) > 1 else None


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


def _is_local_host(host: str) -> bool:
    return host.rstrip(".") == "localhost" or host.rstrip(".").endswith(".localhost")


def check_location(provenance_id: object, retrieved_from: object) -> str:
    """Does the URL a declaration was fetched from agree with its ``provenance_id``?

    Returns ``"match"``, ``"mismatch"`` or ``"unchecked"`` (the id or the URL
    cannot be interpreted unambiguously, the URL is not https, or the host is
    not one the id's platform publishes on; never reported as agreement).  Never raises.

    - The id must be in its canonical spelling (``canonical_provenance_id``): any other
      spelling is ``unchecked``, so a respelled id never establishes an identity beside
      the one its canonical spelling names.
    - The URL's host is never an IP literal (any form a URL parser reads as one:
      ``[::1]``, ``169.254.169.254``, ``2852039166``, ``0x7f.1``) nor ``localhost`` or a
      ``*.localhost`` name: ``unchecked``.
    - ``provenance:domain:<host>[/<path>]``: the URL host (case-insensitive, RFC 3986
      §6.2.2.1) equals ``<host>`` exactly (a subdomain or parent is a mismatch), the
      port is absent or 443, and the URL path (percent-decoded, case-sensitive) starts
      with ``<path>``'s segments.
    - ``provenance:github:<owner>/<repo>``: served from github.com,
      raw.githubusercontent.com or api.github.com/repos with ``<owner>/<repo>``
      (compared case-insensitively, as GitHub does) as the first two path segments
      (another platform's host is a mismatch; an unknown host is unchecked).
      Likewise huggingface (case-insensitive owner/name after an optional
      ``spaces``/``datasets``/``models``), npm (``/package/<name>`` or the
      registry's ``/<name>``, case-sensitive) and pypi (``/project/<name>``,
      compared after PEP 503 normalization).
    - The path is compared as a file server reads it: a path holding ``%2F``, ``%5C`` or
      ``%3B`` (any case), an empty segment (``//``) before its end, or a segment that is
      ``.``/``..`` or contains ``/``, ``\\``, ``;`` or a control once percent-decoded is
      ``unchecked`` (``/agents/alice/..%2F..%2Fagents%2Fmallory/provenance.json``,
      ``/agents/alice/..;/mallory/...``: a server resolves them outside ``<path>``).  So
      an id with a ``;`` in its path never matches a URL.
    """
    provenance_id = _plain(provenance_id)
    if not _is_canonical(provenance_id) or not isinstance(retrieved_from, str):
        return "unchecked"
    retrieved_from = str.__str__(retrieved_from)
    parsed = parse_provenance_id(provenance_id)
    assert parsed is not None
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
    if _is_ip_literal(host) or _is_local_host(host):
        return "unchecked"  # never an identity's home: an SSRF target, or nobody's
    port_ok = port is None or port == _SCHEME_PORT
    segs = _url_segments(url.path)
    if segs is None:
        return "unchecked"

    if platform == "domain":
        declared = id_path.split("/")
        if host != declared[0] or not port_ok:
            return "mismatch"
        want = declared[1:]
        return "match" if segs[: len(want)] == want else "mismatch"

    url_platform = _HOST_PLATFORM.get(host)
    if url_platform is None:
        return "unchecked"
    if url_platform != platform or not port_ok:
        return "mismatch"
    expected = id_path.split("/")
    got = _PLATFORM_IDENTITY[url_platform](host, segs)
    return "match" if got == expected else "mismatch"


def _refuse_url(url: object, why: str) -> SenderIdentityError:
    return SenderIdentityError(f"declaration URL {describe(url)} is refused: {why}", "DECLARATION_URL_REFUSED")


def check_declaration_url(url: object, provenance_id: object) -> None:
    """Refuse, before any fetch, a declaration URL a receiver must not request.

    ``url`` is the sender's ``from.declaration_url``, chosen by a party nothing has
    authenticated yet; ``provenance_id`` its ``from.provenance_id``.  Returns None when
    all of these hold, else raises ``SenderIdentityError`` (403):

    - code ``DECLARATION_URL_REFUSED`` unless the URL is exactly
      ``https://<host>[:443]<path>[?<query>]`` (scheme case-insensitive): https only; port
      443 or none; no userinfo; no fragment; no whitespace, controls, backslash or
      non-ASCII anywhere; and ``<host>`` a DNS host name of two labels or more, written as
      plain lowercase-or-uppercase ``[A-Za-z0-9.-]`` (no percent-encoding, no trailing
      dot), that is no IP literal in any form a URL parser accepts (``[::1]``,
      ``169.254.169.254``, ``2852039166``, ``0x7f.1``, ``0177.0.0.1``) and no special-use
      name: ``localhost``, and names under ``.localhost``, ``.local``, ``.test``,
      ``.invalid``, ``.example``, ``.onion``, ``.arpa`` (``home.arpa``), ``.alt``,
      ``.internal``, ``.localdomain`` (``localdomain4``, ``localdomain6``: what RHEL-family
      hosts files map to loopback).  (``example.com`` and its kin are served by IANA and pass.)
    - codes ``PROVENANCE_ID_INVALID``/``PROVENANCE_ID_NOT_CANONICAL``
      (``require_canonical_provenance_id``) unless the id is in its canonical spelling;
    - code ``DECLARATION_LOCATION_MISMATCH`` unless
      ``check_location(provenance_id, url) == "match"``.

    The gate does not resolve names: a host name whose DNS answer is a private address
    is the fetcher's to refuse (connect only to public addresses, follow no redirect).
    """
    if not isinstance(url, str):
        raise _refuse_url(url, "it is not a string")
    url = str.__str__(url)
    provenance_id = _plain(provenance_id)
    if _AMBIGUOUS_URL_CHARS.search(url):
        raise _refuse_url(url, "it holds whitespace, a control, a backslash or a non-ASCII character")
    if _BRACKETED_HOST.match(url):
        raise _refuse_url(url, "its host is an IP address")
    match = _DECLARATION_URL.fullmatch(url)
    if match is None:
        raise _refuse_url(url, "it is not https://<host>[:443]/<path> (https only, no userinfo)")
    port = match.group("port")
    if port is not None and port != str(_SCHEME_PORT):
        raise _refuse_url(url, "its port is not 443")
    if "#" in url:
        raise _refuse_url(url, "it has a fragment")
    raw_host = match.group("host")
    host = raw_host.lower()
    if not _PLAIN_HOST.fullmatch(host):
        raise _refuse_url(url, "its host is not a plain DNS name (percent-encoding, brackets or other characters)")
    if _is_ip_literal(host):
        raise _refuse_url(url, "its host is an IP address")
    if not _is_dns_name(host):
        raise _refuse_url(url, "its host is not a DNS host name (empty labels, a trailing dot, bad label)")
    labels = host.split(".")
    if len(labels) < 2:
        raise _refuse_url(url, "its host is a single-label name")
    if labels[-1] in _SPECIAL_USE_TLDS:
        raise _refuse_url(url, f"its host is a special-use name (`.{labels[-1]}`)")
    require_canonical_provenance_id(provenance_id)
    if check_location(provenance_id, url) != "match":
        raise SenderIdentityError(
            f"declaration URL {describe(url)} is not where `{provenance_id}` publishes its declaration",
            "DECLARATION_LOCATION_MISMATCH",
        )
