"""Every fenced ``python`` block of every documentation page runs, as a user would paste it.

The pages are ``docs/**/*.md`` as the site shows them (``docs/_tools/sources.py``: includes
expanded, so README.md, CHANGELOG.md, SECURITY.md, CONTRIBUTING.md and bench/README.md count).
Each block runs on its own, in a fresh namespace and an empty working directory, on the
ajpcore under test.  A block that cannot run (it needs the caller's network, say) carries
``<!-- not-run: <reason> -->`` on the line before its fence; there must be few of them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
MAX_NOT_RUN = 2
"""Blocks allowed to carry a not-run marker, across the whole site (CONTRIBUTING's class sketch is one)."""


def _sources():
    name = "_docs_sources"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "_tools" / "sources.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


sources = _sources()
PAGES = [p.relative_to(sources.DOCS).as_posix() for p in sources.page_files()]
BLOCKS = [block for page in PAGES for block in sources.python_blocks(page)]


def _id(block) -> str:
    return f"{block.page}:{block.line}"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.not_run is None], ids=_id)
def test_every_python_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = compile(block.code, f"<{block.page} block at rendered line {block.line}>", "exec")
    exec(code, {"__name__": "__docs_example__"})


def test_blocks_that_do_not_run_are_few_and_say_why():
    skipped = [b for b in BLOCKS if b.not_run is not None]
    assert len(skipped) <= MAX_NOT_RUN, [_id(b) for b in skipped]
    assert all(len(b.not_run) > 10 for b in skipped)


def test_the_site_has_examples_on_every_concept_page():
    with_code = {b.page for b in BLOCKS if b.not_run is None}
    for page in ("index.md", "getting-started.md", "canonical-json.md", "decoding.md", "signatures.md", "ajp.md",
                 "building.md", "provenance.md", "iatp.md", "conformance.md", "backends.md", "errors.md"):
        assert page in with_code, page


def test_readme_keeps_the_two_commands_noxfile_runs():
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert "pip install . && ajpcore demo" in lines
    assert "pip install '.[test]' && pytest --benchmark-disable" in lines


def test_includes_relink_for_the_including_page():
    text = sources.relink("[a](docs/cli.md#x) ![c](bench/chart.png) [s](SECURITY.md) [w](https://x.org/a.md)\n"
                          "```\n[code](docs/cli.md)\n```", "README.md", "index.md")
    assert text == "[a](cli.md#x) ![c](bench/chart.png) [s](security.md) [w](https://x.org/a.md)\n```\n[code](docs/cli.md)\n```"
    assert sources.relink("[a](docs/cli.md)", "README.md", "api/index.md") == "[a](../cli.md)"


def test_missing_optional_pages_read_as_text():
    missing = sorted(p for p in sources.OPTIONAL_PAGES if not sources.page_exists(p))
    for page in missing:
        assert sources.unlink_missing_optional(f"see [that page]({page}#x) and [cli](cli.md)", "ajp.md") == \
            "see that page and [cli](cli.md)"


def test_error_table_lists_every_exception_of_errors_py():
    import ajpcore.errors as errors

    rows = sources.table_rows(sources.error_code_table())
    public = [getattr(errors, n) for n in errors.__all__ if isinstance(getattr(errors, n), type)]
    for cls in public:
        cells = rows[cls.__name__]
        assert (int(cells[1]), cells[2]) == (cls.status, f"`{cls.code}`"), cls
    sources.check_identity_codes()
