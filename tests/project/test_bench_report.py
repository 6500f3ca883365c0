"""bench/report.py: the ratio table from a small synthetic pytest-benchmark JSON (no matplotlib needed)."""

from __future__ import annotations

import json
import sys

import pytest

import report


def bench(group, name, lo, median, **extra):
    return {"group": group, "name": name, "stats": {"min": lo, "median": median, "mean": median}, **extra}


DOC = {
    "machine_info": {
        "cpu": {"brand_raw": "Test CPU 9000", "count": 2},
        "python_implementation": "CPython",
        "python_version": "3.11.7",
    },
    "datetime": "2026-11-30T19:05:11.123456+00:00",
    "benchmarks": [
        bench("decode:offer", "ajpcore-c", 4e-6, 5e-6),
        bench("decode:offer", "ajpcore-py", 40e-6, 44e-6),
        bench("decode:offer", "orjson.loads", 2e-6, 4e-6),
        bench("decode:offer", "json.loads", 8e-6, 10e-6),
        # Unnamed benches, as pytest-benchmark writes them when a test sets no name.
        bench("sign:offer", "test_sign_ajpcore[ajpcore-c-offer]", 3e-6, 3e-6),
        bench("sign:offer", "test_sign_orjson_hmac[offer]", 1.5e-6, 2e-6),
        bench("verify:manifest", "test_verify_ajpcore[ajpcore-c-openssl]", 110e-6, 120e-6),
        bench("verify:manifest", "test_verify_ajpcore[ajpcore-c-libsodium]", 55e-6, 60e-6),
        bench("verify:manifest", "rfc8785+openssl", 220e-6, 240e-6),
        {"group": None, "name": "ungrouped", "stats": {"min": 1.0, "median": 1.0}},
        {"group": "broken", "name": "no stats"},
    ],
}


def test_labels():
    assert report.label({"name": "ajpcore-c", "group": "decode:offer"}) == "ajpcore-c"
    assert report.label({"name": "test_sign_ajpcore[ajpcore-py-offer]", "group": "sign:offer"}) == "ajpcore-py"
    assert report.label({"name": "test_sign_orjson_hmac[offer]", "group": "sign:offer"}) == "sign_orjson_hmac"
    assert report.label({"name": "test_x[ajpcore-c-openssl]", "group": "verify:manifest"}) == "ajpcore-c (openssl)"
    assert report.is_ours("ajpcore-c (openssl)") and report.is_ours("ajpcore-py")
    assert not report.is_ours("ajpcore-cx") and not report.is_ours("orjson.loads")


def test_ratios_every_group_every_twin_every_peer():
    rows = report.ratios(report.results(DOC))
    keys = [(r.group, r.ours, r.peer) for r in rows]
    assert keys == [
        ("decode:offer", "ajpcore-c", "orjson.loads"),
        ("decode:offer", "ajpcore-c", "json.loads"),
        ("decode:offer", "ajpcore-py", "orjson.loads"),
        ("decode:offer", "ajpcore-py", "json.loads"),
        ("sign:offer", "ajpcore-c", "sign_orjson_hmac"),
        ("verify:manifest", "ajpcore-c (libsodium)", "rfc8785+openssl"),
        ("verify:manifest", "ajpcore-c (openssl)", "rfc8785+openssl"),
    ]
    first = rows[0]
    assert first.ratio_min == pytest.approx(4e-6 / 2e-6)
    assert first.ratio_median == pytest.approx(5e-6 / 4e-6)
    assert rows[3].ratio_min == pytest.approx(40e-6 / 8e-6)


def test_table_text():
    text = report.table(report.ratios(report.results(DOC)))
    lines = text.splitlines()
    assert lines[0].startswith("| group | ours | peer |")
    assert "| decode:offer | ajpcore-c | orjson.loads | 4 µs | 2 µs | 2.00× | 1.25× |" in lines
    assert "| verify:manifest | ajpcore-c (libsodium) | rfc8785+openssl | 55 µs | 220 µs | 0.25× | 0.25× |" in lines
    assert len(lines) == 2 + 7


def test_human_time():
    assert report.human_time(1.82e-6) == "1.82 µs"
    assert report.human_time(0.168) == "168 ms"
    assert report.human_time(1.2) == "1.2 s"
    assert report.human_time(5e-10) == "0.5 ns"


def test_main_writes_table_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # any import of it would fail
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(DOC), encoding="utf-8")
    assert report.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Measured on Test CPU 9000, 2 cores, CPython 3.11.7, 2026-11-30 19:05 UTC (min and median of the rounds).\n")
    assert "| sign:offer | ajpcore-c | sign_orjson_hmac | 3 µs | 1.5 µs | 2.00× | 1.50× |" in out
    table = tmp_path / "ratios.md"
    assert report.main([str(path), "--table", str(table), "--group", "sign:offer"]) == 0
    assert table.read_text(encoding="utf-8").count("\n| ") == 2  # the header and the one ratio row of that group
    with pytest.raises(SystemExit, match="needs matplotlib"):
        report.main([str(path), "--chart", str(tmp_path / "chart.png")])


def test_chart_png(tmp_path):
    pytest.importorskip("matplotlib")  # the `bench` extra; the table above never needs it
    out = tmp_path / "chart.png"
    report.chart(DOC, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _run(date, scale):
    """DOC as another run: the same benches, every time times ``scale``, at ``date``."""
    doc = json.loads(json.dumps(DOC))
    doc["datetime"] = date
    for b in doc["benchmarks"]:
        for k in ("min", "median", "mean"):
            if k in b.get("stats", {}):
                b["stats"][k] *= scale
    return doc


RUNS = [_run("2026-11-30T19:05:00+00:00", 1.0), _run("2026-11-30T19:20:00+00:00", 1.5),
        _run("2026-11-30T19:35:00+00:00", 1.2)]


def test_several_runs_give_the_best_minimum_and_the_median_run():
    combined = {(r.group, r.label): r for r in report.combine(RUNS)}
    c = combined[("decode:offer", "ajpcore-c")]
    assert (c.min, c.median, c.runs) == (pytest.approx(4e-6), pytest.approx(4e-6 * 1.2), 3)
    orjson = combined[("decode:offer", "orjson.loads")]
    assert orjson.median == pytest.approx(2e-6 * 1.2)  # the runs' minima 2, 3, 2.4 us: the middle one
    # A contender missing from one run is combined over the runs that have it.
    two = [RUNS[0], dict(RUNS[1], benchmarks=[b for b in RUNS[1]["benchmarks"] if b.get("name") != "json.loads"])]
    only = {(r.group, r.label): r for r in report.combine(two)}[("decode:offer", "json.loads")]
    assert (only.min, only.median, only.runs) == (8e-6, 8e-6, 1)
    # One run: its own rounds' median, as before.
    single = {(r.group, r.label): r for r in report.combine(RUNS[:1])}[("decode:offer", "ajpcore-c")]
    assert (single.min, single.median) == (4e-6, 5e-6)


def test_main_reads_several_runs(tmp_path, capsys):
    paths = []
    for i, doc in enumerate(RUNS):
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps(doc), encoding="utf-8")
    assert report.main([str(p) for p in paths]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "Measured on Test CPU 9000, 2 cores, CPython 3.11.7, 2026-11-30 19:05 to 19:35 UTC, 3 runs "
        "(min: the best of the runs' minima; median: the median of the runs' minima).\n"
    )
    # min 4/2 = 2.00x; median (4*1.2)/(2*1.2) = 2.00x
    assert "| decode:offer | ajpcore-c | orjson.loads | 4 µs | 2 µs | 2.00× | 2.00× |" in out


def _many_groups(n):
    doc = json.loads(json.dumps(DOC))
    doc["benchmarks"] = [
        bench(f"group{i}:fixture-with-a-long-name", name, lo * (1 + i % 3), lo * 1.3 * (1 + i % 3))
        for i in range(n)
        for name, lo in (("ajpcore-c", 1e-6), ("ajpcore-py", 9e-6), ("orjson.loads", 0.8e-6))
    ]
    return doc


@pytest.mark.parametrize("n", [1, 2, 3, 5, 13, 31])
def test_chart_layout_any_number_of_groups(n):
    """The legend never covers the title, the panels never cover the legend, whatever the number of groups."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig = report.figure([_many_groups(n), _many_groups(n)])
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        title = fig._suptitle.get_window_extent(renderer)
        (legend,) = fig.legends
        box = legend.get_window_extent(renderer)
        fig_box = fig.bbox
        assert title.y0 > box.y1, "the legend overlaps the title"
        assert title.y1 <= fig_box.y1 + 1 and box.x0 >= 0 and box.x1 <= fig_box.x1, "header outside the figure"
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert len(panels) == n
        for ax in panels:
            tight = ax.get_tightbbox(renderer)
            assert tight.y1 < box.y0, "a panel (or its title) overlaps the legend"
        # A tick at every minimum and a bar to every median.
        assert all(len(ax.patches) == 3 and len(ax.lines) == 1 for ax in panels)
        assert "2 runs" in fig._suptitle.get_text()
    finally:
        plt.close(fig)


# -- bench/callgrind.py: the check against the baseline (no valgrind needed) --

import callgrind  # noqa: E402  (bench/ is on the path: pyproject's pythonpath)


def _counts(**ratios):
    return {"cases": {case: {"ajpcore": round(1000 * r), "orjson": 1000} for case, r in ratios.items()}}


def test_callgrind_check_fails_only_past_the_tolerance():
    base = _counts(**{"decode:offer": 0.9, "receive:offer": 1.3})
    assert callgrind.check(_counts(**{"decode:offer": 0.927, "receive:offer": 1.2}), base) == []  # +3.0 %, faster
    (failure,) = callgrind.check(_counts(**{"decode:offer": 0.93, "receive:offer": 1.3}), base)
    assert failure.startswith("decode:offer: ajpcore/orjson 0.930 is 3.3 % above the baseline's 0.900")
    (missing,) = callgrind.check(_counts(**{"decode:offer": 0.9}), base)
    assert missing == "receive:offer: in the baseline but not measured"
    assert callgrind.check(_counts(**{"decode:offer": 0.9, "receive:offer": 1.3, "new:case": 9.0}), base) == []
    # orjson alone getting 5 % faster raises the ratio, but ajpcore's own count did not move: no failure
    peer_faster = {"cases": {"decode:offer": {"ajpcore": 900, "orjson": 950}, "receive:offer": {"ajpcore": 1300, "orjson": 1000}}}
    assert callgrind.check(peer_faster, base) == []


def test_callgrind_table_shows_ratios_and_change():
    now = {"cases": {"decode:offer": {"ajpcore": 30_300, "orjson": 32_900, "ssrjson": 26_400},
                     "receive:offer": {"ajpcore": 140_700, "orjson": 105_200}}}
    text = callgrind.table(now, _counts(**{"decode:offer": 0.9}))
    lines = text.splitlines()
    assert lines[0].startswith("| case | ajpcore | orjson | ssrjson |") and lines[0].endswith("| baseline | change |")
    assert lines[2] == "| decode:offer | 30.3k | 32.9k | 26.4k | 0.921 | 1.148 | 0.900 | +2.3 % |"
    assert lines[3] == "| receive:offer | 140.7k | 105.2k | — | 1.337 | — | new | — |"


def test_callgrind_reads_each_dump_by_its_label(tmp_path):
    (tmp_path / "cg.out.1").write_text("desc: Trigger: Client Request: decode:offer|ajpcore|20\nsummary: 600000\ntotals: 600100\n")
    (tmp_path / "cg.out.2").write_text("desc: Trigger: Client Request: decode:offer|ajpcore|120\nsummary: 3600000\ntotals: 9\n")
    (tmp_path / "cg.out").write_text("desc: Trigger: Program termination\nsummary: 5\n")
    assert callgrind._read_dumps(tmp_path) == {("decode:offer", "ajpcore", 20): 600000, ("decode:offer", "ajpcore", 120): 3600000}
