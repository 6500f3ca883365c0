"""docs/a2a.md: the worked example runs as printed (its ```text block is its output, recomputed here)."""

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "a2a.md"


def _blocks(kind):
    return re.findall(r"```" + kind + r"\n(.*?)```", DOC.read_text("utf-8"), re.S)


def test_worked_example_output_is_the_printed_text(core):
    code = _blocks("python")[0]  # the worked example; the a2a-sdk adapter's block after it is not run
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_a2a"})
    assert out.getvalue() == _blocks("text")[0]


def test_worked_example_spec_line_is_the_specifications_text():
    spec_line = next(line for line in _blocks("text")[0].splitlines() if line.startswith("spec "))
    assert spec_line == 'spec {"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}'
