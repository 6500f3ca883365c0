"""Turn a pytest-benchmark JSON file into ajpcore's ratio table and bar chart.

Usage::

    pytest bench --benchmark-only --benchmark-group-by=group --benchmark-json=bench.json
    python bench/report.py bench.json                       # Markdown ratio table on stdout
    python bench/report.py bench.json --chart bench/chart.png --table bench/ratios.md

The table has one row per group, per twin of ours (``ajpcore-c``, ``ajpcore-py``, and
variants such as ``ajpcore-c (openssl)``) and per peer: our time divided by the peer's, for
the minimum and the median of the rounds (below 1 we are faster).  The chart draws, per
group, every contender's minimum time as a multiple of the fastest one in that group; it
needs matplotlib (``pip install '.[bench]'``), the table does not.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence

OURS = ("ajpcore-c", "ajpcore-py")


@dataclass(frozen=True)
class Result:
    """One contender of one group: its label and its min and median round time (seconds)."""

    group: str
    label: str
    min: float
    median: float


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


def by_group(items: Iterable[Result]) -> Dict[str, List[Result]]:
    """Results per group (groups sorted by name; contenders fastest first)."""
    groups: Dict[str, List[Result]] = {}
    for item in items:
        groups.setdefault(item.group, []).append(item)
    return {g: sorted(groups[g], key=lambda r: r.min) for g in sorted(groups)}


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


def machine(doc: Dict[str, Any]) -> str:
    """``<cpu>, <n> cores, Python <version>, <date>`` from the JSON's machine_info and datetime."""
    info = doc.get("machine_info") or {}
    cpu = info.get("cpu") or {}
    parts = [str(cpu.get("brand_raw") or info.get("processor") or info.get("machine") or "unknown CPU")]
    if cpu.get("count"):
        parts.append(f"{cpu['count']} cores")
    if info.get("python_version"):
        parts.append(f"{info.get('python_implementation', 'Python')} {info['python_version']}")
    if doc.get("datetime"):
        parts.append(str(doc["datetime"])[:16].replace("T", " ") + " UTC")
    return ", ".join(parts)


_COLOURS = {"ajpcore-c": "#1f4e9c", "ajpcore-py": "#7fa7e0"}


def _colour(name: str) -> str:
    for twin, colour in _COLOURS.items():
        if name == twin:
            return colour
        if name.startswith(twin + " "):
            return "#b5c9ea"
    return "#9a9a9a"


def chart(doc: Dict[str, Any], path: str, groups: Optional[Sequence[str]] = None) -> None:
    """Write the bar chart PNG: per group, each contender's min time as a multiple of the fastest.

    ``groups``: the groups to draw, in order (default: all).  Raises SystemExit when
    matplotlib is missing (it comes with the ``bench`` extra).
    """
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("the chart needs matplotlib: pip install 'ajpcore[bench]'") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, NullFormatter

    grouped = by_group(results(doc))
    names = [g for g in (groups or list(grouped)) if g in grouped]
    if not names:
        raise SystemExit("no benchmark groups to draw")
    cols = 3
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.0 * cols, 0.35 + 2.05 * rows), squeeze=False)
    for ax, group in zip(axes.flat, names):
        members = grouped[group]
        fastest = members[0].min
        ys = list(range(len(members)))[::-1]
        multiples = [m.min / fastest for m in members]
        ax.barh(ys, multiples, color=[_colour(m.label) for m in members], height=0.7)
        ax.set_yticks(ys)
        ax.set_yticklabels([m.label for m in members], fontsize=7.5)
        for y, value, member in zip(ys, multiples, members):
            weight = "bold" if is_ours(member.label) else "normal"
            ax.text(value, y, f" {value:.2f}×", va="center", fontsize=7, fontweight=weight)
        ax.set_xscale("log")
        ax.set_xlim(0.8, max(multiples) * 3.5)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{group}  (fastest {human_time(fastest)})", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.legend(
        handles=[
            Patch(color=_COLOURS["ajpcore-c"], label="ajpcore-c (native core)"),
            Patch(color=_COLOURS["ajpcore-py"], label="ajpcore-py (pure-Python twin)"),
            Patch(color="#b5c9ea", label="ajpcore variant (other backend, one step)"),
            Patch(color="#9a9a9a", label="peers"),
        ],
        loc="upper right",
        fontsize=8,
        ncol=4,
        frameon=False,
    )
    fig.suptitle(
        "ajpcore vs peers: min time as a multiple of the fastest in each group (log scale, lower is better)\n"
        + machine(doc),
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / (0.35 + 2.05 * rows)))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", help="a pytest-benchmark --benchmark-json file")
    parser.add_argument("--table", help="write the Markdown table here (default: stdout)")
    parser.add_argument("--chart", help="write the bar chart PNG here (needs matplotlib)")
    parser.add_argument("--group", action="append", help="only this group (repeatable; chart and table)")
    args = parser.parse_args(argv)
    with open(args.json, encoding="utf-8") as fh:
        doc = json.load(fh)
    rows = [r for r in ratios(results(doc)) if not args.group or r.group in args.group]
    text = f"Measured on {machine(doc)}.\n\n" + table(rows)
    if args.table:
        with open(args.table, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    if args.chart:
        chart(doc, args.chart, args.group)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
