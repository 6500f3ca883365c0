"""Turn pytest-benchmark JSON files into ajpcore's ratio table and bar chart.

Usage::

    for run in 1 2 3; do pytest bench --benchmark-only --benchmark-group-by=group --benchmark-json=run$run.json; done
    python bench/report.py run1.json run2.json run3.json    # Markdown ratio table on stdout
    python bench/report.py run*.json --chart bench/chart.png --table bench/ratios.md

Several files are several runs of the same benches: each contender's time in one run is the
minimum of its rounds; the report gives the best of those minima (``min``) and their median
(``median``: the middle run, what a second run is likely to show).  With a single file,
``median`` is the median of that run's rounds instead.  The table has one row per group, per
twin of ours (``ajpcore-c``, ``ajpcore-py``, and variants such as ``ajpcore-c (openssl)``) and
per peer: our time divided by the peer's, at the minimum and at the median (below 1 we are
faster).  The chart draws, per group, every contender as a multiple of the fastest median in
that group: a bar to its median and a tick at its minimum, with the machine, the date and the
number of runs in the title.  The chart needs matplotlib (``pip install '.[bench]'``), the
table does not.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence

OURS = ("ajpcore-c", "ajpcore-py")


@dataclass(frozen=True)
class Result:
    """One contender of one group: its label, its min and median time (seconds), and how many runs gave them."""

    group: str
    label: str
    min: float
    median: float
    runs: int = 1


@dataclass(frozen=True)
class Ratio:
    """Ours against one peer in one group: ``ours / peer`` for min and median times."""

    group: str
    ours: str
    peer: str
    ours_min: float
    peer_min: float
    ratio_min: float
    ratio_median: float


def label(bench: Dict[str, Any]) -> str:
    """The contender's name: ``benchmark.name`` when a bench set one, else derived from the test id.

    An unnamed ``test_sign_orjson_hmac[offer]`` becomes ``sign_orjson_hmac``; a parameter
    that names one of our twins (``ajpcore-c``) becomes the label, the remaining
    parameters (other than the group's fixture) a suffix in parentheses.
    """
    name = str(bench["name"])
    match = re.fullmatch(r"(?:test_)?([^\[]*)\[(.*)\]", name)
    if match is None:
        return name
    base, params = match.group(1), match.group(2).split("-")
    fixture = str(bench.get("group") or "").partition(":")[2]
    for twin in OURS:
        head, _, tail = twin.partition("-")
        for k in range(len(params) - 1):
            if params[k] == head and params[k + 1] == tail:
                rest = [p for p in params[:k] + params[k + 2:] if p and p != fixture]
                return twin + (f" ({'-'.join(rest)})" if rest else "")
    return base


def is_ours(name: str) -> bool:
    """True for ``ajpcore-c``, ``ajpcore-py`` and their variants (``ajpcore-c (openssl)``)."""
    return any(name == twin or name.startswith(twin + " ") for twin in OURS)


def results(doc: Dict[str, Any]) -> List[Result]:
    """Every benchmark of a pytest-benchmark JSON document that has a group and stats."""
    out = []
    for bench in doc.get("benchmarks", []):
        stats = bench.get("stats") or {}
        group = bench.get("group")
        if not group or "min" not in stats or "median" not in stats:
            continue
        out.append(Result(str(group), label(bench), float(stats["min"]), float(stats["median"])))
    return out


def combine(docs: Sequence[Dict[str, Any]]) -> List[Result]:
    """One ``Result`` per (group, contender) over several runs: the best minimum and the median of the minima.

    A single document gives its own results (``median`` = the median of its rounds).  A
    contender missing from some runs is combined over the runs that have it (``runs`` says how many).
    """
    if len(docs) == 1:
        return results(docs[0])
    minima: Dict[tuple, List[float]] = {}
    for doc in docs:
        for r in results(doc):
            minima.setdefault((r.group, r.label), []).append(r.min)
    return [
        Result(group, name, min(values), statistics.median(values), len(values))
        for (group, name), values in minima.items()
    ]


def by_group(items: Iterable[Result]) -> Dict[str, List[Result]]:
    """Results per group (groups sorted by name; contenders fastest first by median, then min)."""
    groups: Dict[str, List[Result]] = {}
    for item in items:
        groups.setdefault(item.group, []).append(item)
    return {g: sorted(groups[g], key=lambda r: (r.median, r.min)) for g in sorted(groups)}


def ratios(items: Iterable[Result]) -> List[Ratio]:
    """Ours / peer for every (group, one of ours, peer) pair; peers are the non-ajpcore contenders."""
    rows = []
    for group, members in by_group(items).items():
        ours = sorted((r for r in members if is_ours(r.label)), key=lambda r: r.label)
        peers = [r for r in members if not is_ours(r.label)]
        for mine in ours:
            for peer in peers:
                rows.append(
                    Ratio(
                        group,
                        mine.label,
                        peer.label,
                        mine.min,
                        peer.min,
                        mine.min / peer.min,
                        mine.median / peer.median,
                    )
                )
    return rows


def human_time(seconds: float) -> str:
    """``1.82 µs``, ``712 µs``, ``168 ms``, ``1.20 s``: three significant digits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    raise AssertionError("unreachable")


def table(rows: Sequence[Ratio]) -> str:
    """The ratios as a Markdown table (one line per row, ratio columns as ``1.23×``)."""
    lines = [
        "| group | ours | peer | ours min | peer min | ratio min | ratio median |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.group} | {r.ours} | {r.peer} | {human_time(r.ours_min)} | {human_time(r.peer_min)} "
            f"| {r.ratio_min:.2f}× | {r.ratio_median:.2f}× |"
        )
    return "\n".join(lines) + "\n"


def machine(doc: Dict[str, Any], *more: Dict[str, Any]) -> str:
    """``<cpu>, <n> cores, Python <version>, <date>`` from the JSON's machine_info and datetime.

    With more documents (more runs): the first run's machine, the dates from the first to the
    last run, and ``, N runs``.
    """
    info = doc.get("machine_info") or {}
    cpu = info.get("cpu") or {}
    parts = [str(cpu.get("brand_raw") or info.get("processor") or info.get("machine") or "unknown CPU")]
    if cpu.get("count"):
        parts.append(f"{cpu['count']} cores")
    if info.get("python_version"):
        parts.append(f"{info.get('python_implementation', 'Python')} {info['python_version']}")
    dates = sorted(str(d["datetime"])[:16].replace("T", " ") for d in (doc, *more) if d.get("datetime"))
    if dates:
        span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1][11:] if dates[0][:10] == dates[-1][:10] else dates[-1]}"
        parts.append(span + " UTC")
    if more:
        parts.append(f"{1 + len(more)} runs")
    return ", ".join(parts)


_COLOURS = {"ajpcore-c": "#1f4e9c", "ajpcore-py": "#7fa7e0"}


def _colour(name: str) -> str:
    for twin, colour in _COLOURS.items():
        if name == twin:
            return colour
        if name.startswith(twin + " "):
            return "#b5c9ea"
    return "#9a9a9a"


TITLE_INCHES = 0.85
"""The band above the panels for the two title lines and the note under them; each legend row adds ``LEGEND_ROW_INCHES``."""
LEGEND_ROW_INCHES = 0.25
MIN_WIDTH_INCHES = 12.0
"""The header's width (title and legend) whatever the number of panel columns."""
PANEL_INCHES = 2.05
"""The height of one row of panels."""
COLUMNS = 3


def figure(docs: Sequence[Dict[str, Any]], groups: Optional[Sequence[str]] = None) -> Any:
    """The chart as a matplotlib figure (see ``chart``); raises SystemExit without matplotlib or groups."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("the chart needs matplotlib: pip install 'ajpcore[bench]'") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, NullFormatter

    grouped = by_group(combine(docs))
    names = [g for g in (groups or list(grouped)) if g in grouped]
    if not names:
        raise SystemExit("no benchmark groups to draw")
    cols = min(COLUMNS, len(names))
    rows = (len(names) + cols - 1) // cols
    width = max(6.0 * cols, MIN_WIDTH_INCHES)
    legend_cols = 5 if width >= 16 else 3
    header = TITLE_INCHES + LEGEND_ROW_INCHES * -(-5 // legend_cols)
    height = header + PANEL_INCHES * rows
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False)
    several = len(docs) > 1
    for ax, group in zip(axes.flat, names):
        members = grouped[group]
        unit = members[0].median  # the fastest median is 1x
        ys = list(range(len(members)))[::-1]
        medians = [m.median / unit for m in members]
        minima = [m.min / unit for m in members]
        ax.barh(ys, medians, color=[_colour(m.label) for m in members], height=0.7)
        ax.plot(minima, ys, linestyle="none", marker="|", markersize=11, markeredgewidth=1.6, color="black")
        ax.set_yticks(ys)
        ax.set_yticklabels([m.label for m in members], fontsize=7.5)
        for y, value, member in zip(ys, medians, members):
            weight = "bold" if is_ours(member.label) else "normal"
            ax.text(value, y, f" {value:.2f}×", va="center", fontsize=7, fontweight=weight)
        ax.set_xscale("log")
        ax.set_xlim(min(0.8, min(minima) * 0.9), max(medians + minima) * 3.5)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{group}  (fastest median {human_time(unit)})", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    # Fixed distances in inches from the top, whatever the number of rows: the title's two lines,
    # then the legend, then the panels (tight_layout keeps them below the header band).
    fig.suptitle(
        "ajpcore vs peers: time as a multiple of the fastest median in each group (log scale, lower is better)\n"
        + machine(*docs),
        fontsize=11, y=1 - 0.08 / height, va="top",
    )
    fig.legend(
        handles=[
            Patch(color=_COLOURS["ajpcore-c"], label="ajpcore-c (native core)"),
            Patch(color=_COLOURS["ajpcore-py"], label="ajpcore-py (pure-Python twin)"),
            Patch(color="#b5c9ea", label="ajpcore variant (other backend, one step)"),
            Patch(color="#9a9a9a", label="peers"),
            Line2D([], [], linestyle="none", marker="|", markersize=10, markeredgewidth=1.6, color="black",
                   label="minimum" + (" of the runs" if several else "")),
        ],
        title=None,
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.62 / height),
        fontsize=8,
        ncol=legend_cols,
        frameon=False,
    )
    fig.text(0.5, 1 - 0.56 / height, "bar: the median" + (" of the runs' minima" if several else " of the rounds"),
             ha="center", va="bottom", fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 1 - header / height))
    # tight_layout also makes room for the suptitle and legend it sees, which leaves a gap: the
    # panels' top is set again, one panel-title line under the header band.
    fig.subplots_adjust(top=1 - (header + 0.25) / height)
    return fig


def chart(doc: Any, path: str, groups: Optional[Sequence[str]] = None) -> None:
    """Write the bar chart PNG of one run (a document) or several (a list of documents).

    Per group, each contender's median as a bar and its minimum as a tick, both as a multiple
    of the fastest median in the group.  ``groups``: the groups to draw, in order (default: all).
    Raises SystemExit when matplotlib is missing (it comes with the ``bench`` extra).
    """
    docs = [doc] if isinstance(doc, dict) else list(doc)
    fig = figure(docs, groups)
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", nargs="+", help="pytest-benchmark --benchmark-json files: one per run")
    parser.add_argument("--table", help="write the Markdown table here (default: stdout)")
    parser.add_argument("--chart", help="write the bar chart PNG here (needs matplotlib)")
    parser.add_argument("--group", action="append", help="only this group (repeatable; chart and table)")
    args = parser.parse_args(argv)
    docs = []
    for name in args.json:
        with open(name, encoding="utf-8") as fh:
            docs.append(json.load(fh))
    rows = [r for r in ratios(combine(docs)) if not args.group or r.group in args.group]
    how = ("min: the best of the runs' minima; median: the median of the runs' minima" if len(docs) > 1
           else "min and median of the rounds")
    text = f"Measured on {machine(*docs)} ({how}).\n\n" + table(rows)
    if args.table:
        with open(args.table, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    if args.chart:
        chart(docs, args.chart, args.group)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
