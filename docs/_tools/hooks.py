"""MkDocs hooks of ajpcore's documentation site (``hooks:`` in mkdocs.yml).

- The nav of mkdocs.yml, made tolerant: an entry for one of ``OPTIONAL_PAGES`` that is not in
  the tree is dropped; every other ``docs/*.md`` page that the nav does not name is added
  under "More", so a branch that brings a page needs no nav edit to have it built and found.
- One API reference page per public module of ``ajpcore`` (``api/<module>.md``, generated:
  a new module gets its page by existing).
- ``bench/chart.png`` is carried into the site (``EXTRA_FILES``).
- Each page's Markdown goes through ``sources.render_source`` (includes, the error table,
  links to missing optional pages).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sources  # noqa: E402  (the sibling module, shared with the docs tests)

API_INTRO = (
    "Generated from the docstrings and annotations of the source tree (every name of the module's "
    "`__all__`); the errors each one raises are named in its docstring and listed on [Errors](../errors.md)."
)
API_HEADER = """# `{module}`

{intro}

::: {module}
"""


def public_modules() -> List[str]:
    """``ajpcore.<name>`` for every public module or package of the source tree, sorted (``examples`` holds data)."""
    pkg = sources.ROOT / "ajpcore"
    names = {p.stem for p in pkg.glob("*.py") if not p.name.startswith("_")}
    names |= {p.name for p in pkg.iterdir() if p.is_dir() and (p / "__init__.py").is_file() and not p.name.startswith("_")}
    return [f"ajpcore.{n}" for n in sorted(names - {"examples"})]


def _api_uri(module: str) -> str:
    return f"api/{module.split('.', 1)[1]}.md"


def _nav_uris(nav: Any) -> List[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [u for item in nav for u in _nav_uris(item)]
    if isinstance(nav, dict):
        return [u for v in nav.values() for u in _nav_uris(v)]
    return []


def _prune(nav: Any) -> Any:
    """The nav without entries for optional pages this tree lacks (and without sections left empty)."""
    if isinstance(nav, str):
        return None if nav in sources.OPTIONAL_PAGES and not sources.page_exists(nav) else nav
    if isinstance(nav, list):
        items = [_prune(item) for item in nav]
        return [i for i in items if i not in (None, [], {})]
    if isinstance(nav, dict):
        pruned = {k: _prune(v) for k, v in nav.items()}
        return {k: v for k, v in pruned.items() if v not in (None, [])} or None
    return nav


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    sources.check_identity_codes()
    nav = list(config["nav"] or [])
    api = ["api/index.md"] + [{m: _api_uri(m)} for m in public_modules()]
    for section in nav:
        if isinstance(section, dict) and "API reference" in section:
            section["API reference"] = api
            break
    else:
        nav.append({"API reference": api})
    nav = _prune(nav)
    named = set(_nav_uris(nav))
    more = [p.relative_to(sources.DOCS).as_posix() for p in sources.page_files()]
    more = [u for u in more if u not in named]
    if more:
        nav.append({"More": more})
    config["nav"] = nav
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for module in public_modules():
        content = API_HEADER.format(module=module, intro=API_INTRO)
        files.append(File.generated(config, _api_uri(module), content=content))
    for repo_path, site_path in sources.EXTRA_FILES.items():
        files.append(File.generated(config, site_path, abs_src_path=str(sources.ROOT / repo_path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return sources.render_source(markdown, page.file.src_uri)
