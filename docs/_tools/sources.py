"""What the docs build (``hooks.py``) and the docs tests share: pages, includes, links, the error table, code blocks.

Imports nothing of MkDocs, so ``tests/docs/test_snippets.py`` runs in the plain test suite.

- Pages are the Markdown files under ``docs/`` (``_tools/`` excluded).  Four of them are written
  on other branches (``OPTIONAL_PAGES``): while one is missing, its nav entry is dropped and a link
  to it reads as plain text; every other missing target fails the strict build.
- ``<!-- include: PATH[#NAME] [heading-offset=N] [skip-title=yes] -->`` on a line of its own is
  replaced by the file at ``PATH`` (repository-relative; with ``#NAME``, only its text between
  ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``), its relative links rewritten to work from the
  including page, its headings moved down ``N`` levels (outside code fences).  README.md,
  CHANGELOG.md, SECURITY.md and bench/README.md are included this way, never copied.
- ``<!-- error-code-table -->`` is replaced by the table of every exception class in
  ``ajpcore/errors.py`` (read from the source tree, so it cannot fall behind it).
- A fenced ``python`` block is run by the docs tests unless the line just before its fence is
  ``<!-- not-run: <reason> -->``.
"""

from __future__ import annotations

import importlib.util
import inspect
import posixpath
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

OPTIONAL_PAGES = frozenset({"receiving.md", "deploying.md", "a2a.md", "provenance-identity.md"})
"""Pages other branches write: tolerated while missing (nav entry dropped, links shown as text)."""

EXTRA_FILES: Dict[str, str] = {"bench/chart.png": "bench/chart.png"}
"""Files outside ``docs/`` the site carries: repository path -> path in the site."""

INCLUDED_PAGES: Dict[str, str] = {
    "README.md": "index.md",
    "CHANGELOG.md": "changelog.md",
    "SECURITY.md": "security.md",
    "CONTRIBUTING.md": "contributing.md",
}
"""Repository files that are a page of the site (included whole): a link to one goes to its page."""

SITE_WORDING: Dict[str, List[Tuple[str, str]]] = {
    "README.md": [
        # On GitHub the README points at docs/ and how to build it; on the built site that is moot.
        (r"The documentation is in \[`docs/`\]\([^)]*\) \(build it with `nox -s docs`, or read the\s+Markdown\)",
         "This site has"),
    ],
}
"""Per included file, (pattern, replacement) pairs for sentences that speak of the repository only.
A pattern that no longer matches changes nothing; tests/docs/test_site.py checks the built front page."""

INCLUDE_RE = re.compile(r"^<!-- include: (?P<path>\S+)(?P<options>(?: [a-z-]+=\S+)*) -->[ \t]*$")
NOT_RUN_RE = re.compile(r"^\s*<!-- not-run: (?P<reason>\S.*?) -->\s*$")
FENCE_RE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
LINK_RE = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"\n]*\")?\)")
ERROR_TABLE_MARKER = "<!-- error-code-table -->"


def page_files() -> List[Path]:
    """Every Markdown page of the site, sorted: ``docs/**/*.md`` without ``docs/_tools``."""
    return sorted(p for p in DOCS.rglob("*.md") if "_tools" not in p.relative_to(DOCS).parts)


def page_exists(src_uri: str) -> bool:
    """Whether the page ``src_uri`` (relative to ``docs/``) exists in this tree."""
    return (DOCS / src_uri).is_file()


# -- fences and links ------------------------------------------------------------------------------


def _outside_fences(lines: List[str]) -> Iterator[Tuple[int, bool]]:
    """``(index, in_code)`` for every line: ``in_code`` is True for a fence line and what it encloses."""
    fence: Optional[str] = None
    for i, line in enumerate(lines):
        m = FENCE_RE.match(line)
        if fence is None:
            if m:
                fence = m.group("fence")
                yield i, True
                continue
            yield i, False
        else:
            if m and m.group("fence").startswith(fence[0]) and len(m.group("fence")) >= len(fence) and not m.group("info"):
                fence = None
            yield i, True


def _split_anchor(target: str) -> Tuple[str, str]:
    path, sep, anchor = target.partition("#")
    return path, sep + anchor


def _is_relative(target: str) -> bool:
    return not (target.startswith(("#", "/")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target))


def relink(markdown: str, source: str, page_src_uri: str) -> str:
    """Rewrite the relative links of ``markdown``, a file at repository path ``source``, for the page ``page_src_uri``.

    A target under ``docs/`` becomes that page or file, one in ``EXTRA_FILES`` its site
    path; any other target is left as written (the strict build then reports it).
    """
    lines = markdown.split("\n")
    page_dir = posixpath.dirname(page_src_uri)
    src_dir = posixpath.dirname(source)

    def fix(m: "re.Match[str]") -> str:
        target = m.group("target")
        if not _is_relative(target):
            return m.group(0)
        path, anchor = _split_anchor(target)
        repo_path = posixpath.normpath(posixpath.join(src_dir, path))
        if repo_path.startswith("docs/"):
            site = repo_path[len("docs/"):]
        elif repo_path in EXTRA_FILES:
            site = EXTRA_FILES[repo_path]
        elif repo_path in INCLUDED_PAGES:
            site = INCLUDED_PAGES[repo_path]
        else:
            return m.group(0)
        new = posixpath.relpath(site, page_dir or ".") + anchor
        return f"{m.group('bang')}[{m.group('text')}]({new}{m.group('title') or ''})"

    for i, in_code in _outside_fences(lines):
        if not in_code:
            lines[i] = LINK_RE.sub(fix, lines[i])
    return "\n".join(lines)


def unlink_missing_optional(markdown: str, page_src_uri: str) -> str:
    """Show links to an ``OPTIONAL_PAGES`` page that is not in this tree as their plain text."""
    lines = markdown.split("\n")
    page_dir = posixpath.dirname(page_src_uri)

    def fix(m: "re.Match[str]") -> str:
        target = m.group("target")
        if m.group("bang") or not _is_relative(target):
            return m.group(0)
        path, _ = _split_anchor(target)
        site = posixpath.normpath(posixpath.join(page_dir, path)) if path else page_src_uri
        if site in OPTIONAL_PAGES and not page_exists(site):
            return m.group("text")
        return m.group(0)

    for i, in_code in _outside_fences(lines):
        if not in_code:
            lines[i] = LINK_RE.sub(fix, lines[i])
    return "\n".join(lines)


# -- includes --------------------------------------------------------------------------------------


def _shift_headings(markdown: str, offset: int, skip_title: bool) -> str:
    lines = markdown.split("\n")
    out: List[str] = []
    title_skipped = not skip_title
    for i, in_code in _outside_fences(lines):
        line = lines[i]
        if not in_code and re.match(r"^#{1,6} ", line):
            if not title_skipped and line.startswith("# "):
                title_skipped = True
                continue
            line = "#" * offset + line
        out.append(line)
    return "\n".join(out)


def expand_includes(markdown: str, page_src_uri: str, _depth: int = 0) -> str:
    """``markdown`` (the page ``page_src_uri``) with every include line replaced by its file (see the module doc)."""
    if _depth > 4:
        raise ValueError(f"{page_src_uri}: includes nested more than 4 deep")
    lines = markdown.split("\n")
    for i, in_code in reversed(list(_outside_fences(lines))):
        m = None if in_code else INCLUDE_RE.match(lines[i])
        if m is None:
            continue
        source, _, marker = m.group("path").partition("#")
        options = dict(opt.split("=", 1) for opt in m.group("options").split())
        unknown = set(options) - {"heading-offset", "skip-title"}
        if unknown:
            raise ValueError(f"{page_src_uri}: unknown include option(s) {sorted(unknown)}")
        path = ROOT / source
        if not path.is_file():
            raise FileNotFoundError(f"{page_src_uri}: included file {source} does not exist")
        text = path.read_text("utf-8")
        if marker:
            text = table_between(text, marker)
        text = _shift_headings(text, int(options.get("heading-offset", "0")), options.get("skip-title") == "yes")
        text = relink(text, source, page_src_uri)
        for pattern, replacement in SITE_WORDING.get(source, []):
            text = re.sub(pattern, replacement, text)
        lines[i] = expand_includes(text.rstrip("\n"), page_src_uri, _depth + 1)
    return "\n".join(lines)


# -- the error-code table ----------------------------------------------------------------------------


def source_errors_module() -> ModuleType:
    """``ajpcore/errors.py`` of this tree, loaded on its own (it imports nothing of the package)."""
    name = "_ajpcore_errors_of_the_docs"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "ajpcore" / "errors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _first_sentence(doc: Optional[str]) -> str:
    text = " ".join((doc or "").strip().split("\n\n", 1)[0].split())
    m = re.match(r"^(.+?\.)(\s|$)", text)
    sentence = m.group(1) if m else text
    return sentence.replace("``", "`").replace("|", "\\|")


def error_classes() -> List[type]:
    """Every exception class of ``ajpcore/errors.py`` (``AjpError`` and its subclasses), in source order."""
    errors = source_errors_module()
    base = errors.AjpError
    found = [obj for _, obj in vars(errors).items() if inspect.isclass(obj) and issubclass(obj, base) and obj.__module__ == errors.__name__]
    return sorted(found, key=lambda cls: inspect.getsourcelines(cls)[1])


def error_code_table() -> str:
    """The Markdown table of every ajpcore exception: class (and what else it is), HTTP status, code, meaning."""
    errors = source_errors_module()
    rows = ["| class | HTTP | code | raised when |", "|---|---|---|---|"]
    for cls in error_classes():
        builtins = [b.__name__ for b in cls.__mro__[1:] if b.__module__ == "builtins" and b not in (Exception, BaseException, object)]
        parent = next(b.__name__ for b in cls.__mro__[1:] if b.__module__ == errors.__name__ or b is Exception)
        also = ([parent] if parent != "Exception" else []) + builtins
        name = f"`{cls.__name__}`" + (f"<br>(a {', '.join(f'`{b}`' for b in also)})" if also else "")
        rows.append(f"| {name} | {cls.status} | `{cls.code}` | {_first_sentence(cls.__doc__)} |")
    return "\n".join(rows)


def identity_codes_in_errors() -> List[str]:
    """The codes ``SenderIdentityError``'s docstring names (the reference SDK's and ajpcore's own)."""
    doc = source_errors_module().SenderIdentityError.__doc__ or ""
    return sorted(set(re.findall(r"``([A-Z][A-Z_]+)``", doc)))


def table_between(markdown: str, name: str) -> str:
    """The text between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` lines."""
    begin, end = f"<!-- {name}:begin -->\n", f"\n<!-- {name}:end -->"
    return markdown[markdown.index(begin) + len(begin) : markdown.index(end)]


def table_rows(table: str) -> Dict[str, List[str]]:
    """A Markdown table's body rows by the text of their first cell (backticks stripped)."""
    rows: Dict[str, List[str]] = {}
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        first = re.match(r"`([^`]+)`", cells[0])
        rows[first.group(1) if first else cells[0]] = cells
    return rows


def check_identity_codes() -> None:
    """Raise ValueError unless docs/provenance.md's identity-code table lists exactly the codes errors.py names."""
    documented = set(table_rows(table_between((DOCS / "provenance.md").read_text("utf-8"), "identity-codes")))
    named = set(identity_codes_in_errors())
    if documented != named:
        raise ValueError(
            f"identity codes: docs/provenance.md lists {sorted(documented - named)} that SenderIdentityError's "
            f"docstring does not name, and lacks {sorted(named - documented)}"
        )


def expand_error_table(markdown: str) -> str:
    """Replace the error-table marker with the generated table."""
    return markdown.replace(ERROR_TABLE_MARKER, error_code_table())


ESCAPED_TICK_SPAN_RE = re.compile(r"(?<![`\\])`((?:\\`|[^`\n])*?\\`(?:\\`|[^`\n])*?)`(?!`)")


def fix_code_spans(markdown: str) -> str:
    r"""Code spans as GitHub and Python-Markdown both show them, outside code fences.

    A span holding backslash-escaped backticks (which no Markdown honours inside a code span)
    becomes a double-backtick span with plain backticks inside, and an escaped pipe inside a
    table row's code span (GitHub's escape there) a plain pipe (Python-Markdown does not split
    a row at a pipe inside backticks).
    """
    lines = markdown.split("\n")

    def double(m: "re.Match[str]") -> str:
        return "`` " + m.group(1).replace("\\`", "`") + " ``"

    def pipes(m: "re.Match[str]") -> str:
        return m.group(0).replace("\\|", "|")

    for i, in_code in _outside_fences(lines):
        if in_code:
            continue
        line = ESCAPED_TICK_SPAN_RE.sub(double, lines[i])
        if line.lstrip().startswith("|"):
            line = re.sub(r"(?<!`)`[^`\n]+`(?!`)", pipes, line)
        lines[i] = line
    return "\n".join(lines)


def render_source(markdown: str, page_src_uri: str) -> str:
    """A page's Markdown as the site shows it: includes, error table, code spans, links to missing optional pages."""
    text = expand_includes(markdown, page_src_uri)
    text = expand_error_table(text)
    text = fix_code_spans(text)
    return unlink_missing_optional(text, page_src_uri)


# -- code blocks -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CodeBlock:
    """A fenced ``python`` block of a page: where it starts, its code, and why it is not run (or None)."""

    page: str
    line: int
    code: str
    not_run: Optional[str]


def python_blocks(page_src_uri: str) -> List[CodeBlock]:
    """The fenced ``python`` blocks of a page as the site shows it (includes expanded), in order."""
    text = render_source((DOCS / page_src_uri).read_text("utf-8"), page_src_uri)
    lines = text.split("\n")
    blocks: List[CodeBlock] = []
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, indent = m.group("fence"), m.group("info"), m.group("indent")
        j = i + 1
        while j < len(lines) and not re.match(rf"^\s*{re.escape(fence)}\s*$", lines[j]):
            j += 1
        if info in ("python", "py"):
            body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : j]]
            before = NOT_RUN_RE.match(lines[i - 1]) if i > 0 else None
            blocks.append(CodeBlock(page_src_uri, i + 1, "\n".join(body) + "\n", before.group("reason") if before else None))
        i = j + 1
    return blocks
