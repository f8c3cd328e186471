"""Plots of the benchmark: ``python3 -m nox -s plots`` (reads docs/bench/results.json, writes docs/_static/bench/).

- ``latency-<database>.png``: in-process latency per variant per request, one panel per table
  size; bars are medians, whiskers min and max, log scale.
- ``http.png``: listings per second over HTTP per variant per request, one panel per database.
- ``size.png``: how the simple and the representative request grow with the table size.
- ``depth.png``: how a page's cost grows with its depth: offset pages against keyset pages.

``--results`` and ``--output`` choose other files (e.g. a ``--quick`` run's).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "bench" / "results.json"
OUTPUT = ROOT / "docs" / "_static" / "bench"
VARIANTS = ("floor", "ours-sqlalchemy", "ours-piccolo", "aa", "piccolo-crud")
LABELS = {
    "floor": "floor (raw driver)",
    "ours-sqlalchemy": "ours, SQLAlchemy",
    "ours-piccolo": "ours, Piccolo",
    "aa": "advanced-alchemy",
    "piccolo-crud": "PiccoloCRUD",
    "ours-sqlalchemy+keyset": "ours, SQLAlchemy, keyset",
    "ours-piccolo+keyset": "ours, Piccolo, keyset",
}
COLORS = {
    "floor": "#444444",
    "ours-sqlalchemy": "#1f77b4",
    "ours-piccolo": "#2ca02c",
    "aa": "#d62728",
    "piccolo-crud": "#ff7f0e",
    "ours-sqlalchemy+keyset": "#1f77b4",
    "ours-piccolo+keyset": "#2ca02c",
}
REQUESTS = ("simple", "representative", "deep", "past_end")
SIZE_ROWS_LABEL = {"flights": "336,776", "1m": "1M", "10m": "10M"}


def ordered(values: Sequence[str], order: Sequence[str]) -> list[str]:
    """``values`` in ``order``'s order, unknown ones last."""
    return sorted(set(values), key=lambda value: order.index(value) if value in order else len(order))


def bars(
    axis: Any, groups: Sequence[str], series: Sequence[str], value: dict[tuple[str, str], tuple[float, float, float]]
) -> None:
    """Grouped bars with min/max whiskers; ``value[(group, series)] = (median, min, max)``."""
    width = 0.8 / max(1, len(series))
    for index, name in enumerate(series):
        xs, heights, low, high = [], [], [], []
        for position, group in enumerate(groups):
            if (group, name) not in value:
                continue
            median, minimum, maximum = value[(group, name)]
            xs.append(position + (index - (len(series) - 1) / 2) * width)
            heights.append(median)
            low.append(median - minimum)
            high.append(maximum - median)
        axis.bar(xs, heights, width, yerr=[low, high], capsize=2, label=LABELS.get(name, name), color=COLORS.get(name))
    axis.set_xticks(range(len(groups)), [group.replace("_", "-") for group in groups])


def latency(report: dict[str, Any], output: pathlib.Path) -> list[pathlib.Path]:
    """One figure per database: panels per size, bars per variant per request."""
    written = []
    entries = [entry for entry in report["in_process"] if "median_ms" in entry]
    for database in ordered([entry["database"] for entry in entries], ("sqlite", "postgresql")):
        mine = [entry for entry in entries if entry["database"] == database]
        sizes = ordered([entry["size"] for entry in mine], tuple(SIZE_ROWS_LABEL))
        figure, axes = plt.subplots(1, len(sizes), figsize=(max(8.0, 5.2 * len(sizes)), 4.6), squeeze=False)
        for axis, size in zip(axes[0], sizes, strict=True):
            here = [entry for entry in mine if entry["size"] == size]
            groups = ordered([entry["request"] for entry in here], REQUESTS)
            series = ordered([entry["variant"] for entry in here], VARIANTS)
            value = {(e["request"], e["variant"]): (e["median_ms"], e["min_ms"], e["max_ms"]) for e in here}
            bars(axis, groups, series, value)
            axis.set_yscale("log")
            axis.set_title(f"{database}, {SIZE_ROWS_LABEL.get(size, size)} flights")
            axis.set_ylabel("ms per list call (in-process)")
            axis.grid(axis="y", which="both", alpha=0.3)
        handles, labels = axes[0][0].get_legend_handles_labels()
        figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize="small")
        figure.suptitle(f"Latency per variant and request, {database} (median, whiskers min-max)")
        figure.tight_layout(rect=(0, 0.07, 1, 1))
        path = output / f"latency-{database}.png"
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)
    return written


def http(report: dict[str, Any], output: pathlib.Path) -> list[pathlib.Path]:
    """Listings per second over HTTP, a panel per database."""
    entries = [entry for entry in report["http"] if "listings_per_s" in entry]
    if not entries:
        return []
    databases = ordered([entry["database"] for entry in entries], ("sqlite", "postgresql"))
    figure, axes = plt.subplots(1, len(databases), figsize=(6.5 * len(databases), 4.6), squeeze=False)
    for axis, database in zip(axes[0], databases, strict=True):
        here = [entry for entry in entries if entry["database"] == database]
        groups = ordered([entry["request"] for entry in here], REQUESTS)
        series = ordered([entry["variant"] for entry in here], VARIANTS)
        value = {
            (e["request"], e["variant"]): (
                e["listings_per_s"]["median"],
                e["listings_per_s"]["min"],
                e["listings_per_s"]["max"],
            )
            for e in here
        }
        bars(axis, groups, series, value)
        axis.set_yscale("log")
        axis.set_title(f"{database}, {SIZE_ROWS_LABEL.get(here[0]['size'], here[0]['size'])} flights, over HTTP")
        axis.set_ylabel("listings per second (higher is better)")
        axis.grid(axis="y", which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize="small")
    figure.tight_layout(rect=(0, 0.07, 1, 1))
    path = output / "http.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return [path]


def size_growth(report: dict[str, Any], output: pathlib.Path) -> list[pathlib.Path]:
    """Median latency against the table size, the simple (solid) and representative (dashed) requests."""
    rows: dict[str, int] = report["settings"]["rows"]
    entries = [e for e in report["in_process"] if "median_ms" in e and e["request"] in {"simple", "representative"}]
    if len({entry["size"] for entry in entries}) < 2:
        return []
    databases = ordered([entry["database"] for entry in entries], ("sqlite", "postgresql"))
    figure, axes = plt.subplots(1, len(databases), figsize=(6 * len(databases), 5.0), squeeze=False)
    for axis, database in zip(axes[0], databases, strict=True):
        for request, style in (("simple", "-"), ("representative", "--")):
            for variant in VARIANTS:
                points = sorted(
                    (rows[e["size"]], e["median_ms"])
                    for e in entries
                    if e["database"] == database and e["request"] == request and e["variant"] == variant
                )
                if points:
                    axis.plot(
                        [x for x, _ in points],
                        [y for _, y in points],
                        style,
                        marker="o",
                        color=COLORS[variant],
                        label=f"{LABELS[variant]}, {request}",
                    )
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("flights in the table")
        axis.set_ylabel("ms per list call, with the exact total")
        axis.set_title(f"Cost growth with table size, {database}")
        axis.grid(which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=4, fontsize="small")
    figure.tight_layout(rect=(0, 0.14, 1, 1))
    path = output / "size.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return [path]


def depth_growth(report: dict[str, Any], output: pathlib.Path) -> list[pathlib.Path]:
    """Median latency against page depth: offset pages (solid) and keyset pages (dotted)."""
    entries = [entry for entry in report["depth"] if "median_ms" in entry]
    if not entries:
        return []
    databases = ordered([entry["database"] for entry in entries], ("sqlite", "postgresql"))
    figure, axes = plt.subplots(1, len(databases), figsize=(6 * len(databases), 4.2), squeeze=False)
    for axis, database in zip(axes[0], databases, strict=True):
        here = [entry for entry in entries if entry["database"] == database]
        for variant in ordered([entry["variant"] for entry in here], tuple(LABELS)):
            points = sorted((e["depth"] * 100, e["median_ms"]) for e in here if e["variant"] == variant)
            axis.plot(
                [x for x, _ in points],
                [y for _, y in points],
                ":" if variant.endswith("+keyset") else "-",
                marker="s" if variant.endswith("+keyset") else "o",
                color=COLORS.get(variant),
                label=LABELS.get(variant, variant),
            )
        axis.set_yscale("log")
        axis.set_xlabel("page depth, % of the pages")
        axis.set_ylabel("ms per list call")
        size = here[0]["size"]
        axis.set_title(f"Cost growth with page depth, {database}, {SIZE_ROWS_LABEL.get(size, size)} flights")
        axis.grid(which="both", alpha=0.3)
    axes[0][0].legend(fontsize="small")
    figure.tight_layout()
    path = output / "depth.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return [path]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=pathlib.Path, default=RESULTS, help="default: %(default)s")
    parser.add_argument("--output", type=pathlib.Path, default=OUTPUT, help="default: %(default)s")
    arguments = parser.parse_args(argv)
    report = json.loads(arguments.results.read_text(encoding="utf-8"))
    arguments.output.mkdir(parents=True, exist_ok=True)
    written = [
        *latency(report, arguments.output),
        *http(report, arguments.output),
        *size_growth(report, arguments.output),
        *depth_growth(report, arguments.output),
    ]
    for path in written:
        sys.stderr.write(f"[plots] wrote {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
