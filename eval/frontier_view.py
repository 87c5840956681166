"""What a frontier looks like to a person (an 80-column table, a legend, a few lines) and
to a program (one JSON document: ``calibrate --json``, ``summary.json`` of ``eval
--frontier --out DIR``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from .frontier import Certified, Frontier
from .parts import Outcome

METHOD = "fixed-sequence exact binomial (Learn-then-Test), α split over the fitting-part ranking"
WIDTH = 80

LEGEND = (
    "cell: recall certified on the testing part, its false-hit rate there{held}; — nothing "
    "certified. * the configuration saved for that δ: the certified cell with the most "
    "recall (every cell's level is a share of α, so all hold together at {conf:.0%}); "
    "without a certified cell, the fitting part's first choice."
)


def _cell(row: Certified) -> str:
    testing, held = row.testing, row.held_out
    if row.threshold is None or testing is None:
        return "—"
    if held is None:
        return f"{testing.recall:.0%} {testing.false_hit_rate:.1%}"
    fails = "!" if not row.holds else ""
    return f"{testing.recall:.0%} {held.false_hit_rate:.1%}{fails}"


def frontier_table(result: Frontier, dataset: str, embedders: Sequence[str], pairs: int) -> Table:
    """A row per scorer, a column per δ; fits in 80 columns (names wrap, cells do not)."""
    parts = result.parts
    held = f", held-out {len(parts.held_out)}" if len(parts.held_out) else ""
    table = Table(
        title=f"{dataset}: what each scorer guarantees ({1 - result.alpha:.0%} confidence)",
        caption=f"{pairs} pairs; embedders {', '.join(embedders)}; fitting {len(parts.fit)}, "
        f"testing {len(parts.test)}{held} pairs",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        width=WIDTH,
    )
    table.add_column("scorer", overflow="fold", ratio=1)
    for delta in result.deltas:
        table.add_column(f"δ={delta:.0%}", justify="right", no_wrap=True)
    for name in dict.fromkeys(name for name, _ in result.rows):
        cells = []
        for delta in result.deltas:
            mark = "*" if result.chosen[delta] == name else " "
            cells.append(_cell(result.rows[(name, delta)]) + mark)
        table.add_row(name, *cells)
    return table


def legend(result: Frontier) -> str:
    held = (
        " (with --holdout: on the held-out part; ! above δ)" if len(result.parts.held_out) else ""
    )
    return LEGEND.format(held=held, conf=1 - result.alpha)


def print_frontier(result: Frontier, dataset: str, embedders: Sequence[str], out: Console) -> None:
    """The table, its legend, and the summary lines, at most 80 columns wide."""
    narrow = Console(
        file=out.file,
        width=WIDTH,
        soft_wrap=False,
        highlight=False,
        force_terminal=out.is_terminal,
        no_color=out.no_color,
    )
    narrow.print(frontier_table(result, dataset, embedders, result.total_pairs))
    narrow.print(legend(result))
    for line in summary_lines(result):
        narrow.print(line)


def summary_lines(result: Frontier) -> list[str]:
    """The tightest δ that qualifies, and for each δ nothing certified, the pairs needed."""
    tightest = result.tightest
    lines = [
        "no δ in the list qualifies with these pairs"
        if tightest is None
        else f"tightest δ that qualifies: {tightest:g}"
    ]
    for delta in result.deltas:
        need = result.needed.get(delta)
        if need is None:
            continue
        first = result.ranked[delta][0]
        if need.pairs is not None:
            more = need.pairs - need.given
            lines.append(
                f"δ={delta:g}: nothing certified with {need.given} pairs; about {need.pairs} "
                f"in all ({more} more) would likely certify {first} (the same procedure, "
                "simulated on these pairs)"
            )
        elif need.floor_rate >= delta:
            lines.append(
                f"δ={delta:g}: no threshold of {first} shows a false-hit rate under δ "
                f"(lowest {need.floor_rate:.1%}); more pairs alone will not help"
            )
        else:
            lines.append(
                f"δ={delta:g}: nothing certified; even 200x these pairs would likely not certify it"
            )
    return lines


def choice_line(chosen: Certified) -> str:
    testing, held = chosen.testing, chosen.held_out
    if testing is None or chosen.threshold is None:
        return f"no configuration certified at δ={chosen.delta:g}"
    text = (
        f"chosen for δ={chosen.delta:g}: {chosen.scorer}, threshold {chosen.threshold:.6g} "
        f"(hit when score >=); testing part {testing.false_hits} false of {testing.hits} hits "
        f"(p={chosen.walk.p_value:.3g} <= {chosen.alpha:.3g}), recall {testing.recall:.1%}"
    )
    if held is not None:
        verdict = "holds" if chosen.holds else "does NOT hold"
        text += (
            f"; held-out false-hit rate {held.false_hit_rate:.2%} ({held.false_hits} of "
            f"{held.hits} hits), recall {held.recall:.1%}: {verdict}"
        )
    return text


def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _outcome(o: Outcome | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {
        "hits": o.hits,
        "false_hits": o.false_hits,
        "positives": o.positives,
        "recall": o.recall,
        "false_hit_rate": o.false_hit_rate,
    }


def frontier_json(result: Frontier, dataset: str, embedders: Sequence[str]) -> dict[str, Any]:
    """Per scorer and δ: certified recall, false-hit rate on the testing part, threshold."""
    parts = result.parts
    cells = []
    for (name, delta), row in result.rows.items():
        cells.append(
            {
                "scorer": name,
                "delta": delta,
                "alpha": row.alpha,
                "rank": result.ranked[delta].index(name) + 1,
                "predicted_recall": result.predicted.get((name, delta)),
                "certified": row.threshold is not None,
                "threshold": _number(row.threshold),
                "recall": None if row.testing is None else row.testing.recall,
                "false_hit_rate": None if row.testing is None else row.testing.false_hit_rate,
                "p_value": row.walk.p_value,
                "testing": _outcome(row.testing),
                "held_out": _outcome(row.held_out),
                "holds": row.holds,
            }
        )
    needed = {
        str(delta): {
            "pairs": n.pairs,
            "more": None if n.pairs is None else n.pairs - n.given,
            "given": n.given,
            "chance": n.chance,
            "floor_rate": n.floor_rate,
        }
        for delta, n in result.needed.items()
    }
    chosen = {
        str(delta): {
            "scorer": name,
            "certified": result.rows[(name, delta)].threshold is not None,
            "threshold": _number(result.rows[(name, delta)].threshold),
        }
        for delta, name in result.chosen.items()
    }
    return {
        "dataset": dataset,
        "pairs": result.total_pairs,
        "embedders": list(embedders),
        "confidence": 1 - result.alpha,
        "method": METHOD,
        "parts": {"fit": len(parts.fit), "test": len(parts.test), "held_out": len(parts.held_out)},
        "deltas": list(result.deltas),
        "tightest": result.tightest,
        "cells": cells,
        "chosen": chosen,
        "needed": needed,
    }
