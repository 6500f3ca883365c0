"""First-day frictions the docs promise about: closed pipes and ``python -m ajpcore`` in a checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _pipeline(command: str, cwd: str) -> int:
    """The status of ``COMMAND | head -c1`` under pipefail: the ajpcore side's status when it failed."""
    out = subprocess.run(["bash", "-c", f"set -o pipefail; {command} | head -c1 >/dev/null"], cwd=cwd,
                         capture_output=True, timeout=60)
    assert out.stderr == b"", out.stderr
    return out.returncode


def test_demo_into_head_exits_0_every_time():
    # docs/cli.md "Closed pipes": the demo writes its report in one write, before head can close.
    statuses = [_pipeline(f"{sys.executable} -m ajpcore demo", tempfile.gettempdir()) for _ in range(10)]
    assert statuses == [0] * 10


def test_output_larger_than_the_pipe_into_head_exits_141_every_time(tmp_path):
    doc = tmp_path / "big.json"
    doc.write_text(json.dumps({"rows": ["x" * 100] * 4000}))  # ~400 KB of output
    statuses = [_pipeline(f"{sys.executable} -m ajpcore canonicalize {doc}", str(tmp_path)) for _ in range(4)]
    assert statuses == [141] * 4


def test_python_m_ajpcore_in_a_checkout_names_the_source_tree():
    # Without the AJPCORE_ switches: CI requires the native core, which a clean checkout has not built.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AJPCORE_")}
    out = subprocess.run([sys.executable, "-m", "ajpcore", "--version"], cwd=ROOT, capture_output=True, timeout=60,
                         env=env)
    assert out.returncode == 0, out.stderr
    banner = out.stderr.decode().splitlines()
    assert len(banner) == 1 and banner[0].startswith(f"ajpcore: running the source tree at {ROOT / 'ajpcore'} (ajpcore ")
    assert ("native core" in banner[0]) or ("pure Python core" in banner[0] and "pip install ." in banner[0])


def test_outside_a_checkout_the_banner_only_names_a_source_tree():
    where = subprocess.run([sys.executable, "-c", "import ajpcore, pathlib; print(pathlib.Path(ajpcore.__file__).resolve().parent)"],
                           cwd=tempfile.gettempdir(), capture_output=True, timeout=60, check=True)
    package = Path(where.stdout.decode().strip())
    out = subprocess.run([sys.executable, "-m", "ajpcore", "--version"], cwd=tempfile.gettempdir(), capture_output=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    if (package.parent / "native" / "_core_c.pyx").is_file():  # an editable install: still a source tree
        assert out.stderr.decode().startswith(f"ajpcore: running the source tree at {package} ")
    else:
        assert out.stderr == b""


def test_ajp_page_gives_the_default_per_sender_quota_the_code_has():
    # docs/ajp.md said 1,000 where the code gave 25,000 (issue 31): the page's numbers are the code's.
    import re

    from ajpcore import ajp
    from ajpcore.ajp._replay import DEFAULT_QUOTA_SHARE

    guard = ajp.MemoryReplayGuard()
    text = " ".join((ROOT / "docs" / "ajp.md").read_text("utf-8").split())
    said = re.search(r"`(\d[\d_]*) // (\d+)` = ([\d,]+) with the default `max_entries`", text)
    assert said, "docs/ajp.md no longer states the default quota"
    assert (int(said.group(1)), int(said.group(2))) == (guard.max_entries, DEFAULT_QUOTA_SHARE)
    assert int(said.group(3).replace(",", "")) == guard.max_per_identity
