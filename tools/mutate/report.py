"""The mutation run's table, summary and JSON."""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
from typing import TextIO

statuses = ("killed", "survived", "timed_out", "build_error", "equivalent")


def summarise(rows) -> dict:
    counts = {status: sum(1 for r in rows if r.status == status) for status in statuses}
    scored = len(rows) - counts["equivalent"] - counts["build_error"]
    unit_scored = [r for r in rows if r.status not in ("equivalent", "build_error") and r.unit != "-"]
    return {
        "total": len(rows),
        **counts,
        "score": round(counts["killed"] / scored, 4) if scored else None,
        # The unit tests' own score, for comparison only: never part of the search's.
        "unit_score": round(sum(r.unit == "killed" for r in unit_scored) / len(unit_scored), 4)
        if unit_scored else None,
        "survived_search_killed_by_unit": sum(
            1 for r in rows if r.status in ("survived", "timed_out") and r.unit == "killed"),
    }


def _killer_text(r) -> str:
    if r.status == "killed":
        return f"{r.killer.scenario} [{r.killer.strategy}] {r.killer.invariant}"
    if r.status in ("equivalent", "build_error"):
        return r.note[:60]
    return "-"


def print_mutant_list(out: TextIO, rows) -> None:
    for r in rows:
        m = r.mutant
        tag = f"  [equivalent: {r.note}]" if r.status == "equivalent" else ""
        out.write(f"{m.id}  {m.file}:{m.line}  {m.operator}  {m.diff()}{tag}\n")
    out.write(f"{len(rows)} mutants\n")


def print_table(out: TextIO, rows, summary: dict, budget: dict) -> None:
    header = f"{'mutant':<10} {'where':<34} {'operator':<13} {'status':<11} {'s':>6} {'unit':<9} {'killed by / note':<44} diff"
    out.write(header + "\n")
    for r in rows:
        m = r.mutant
        seconds = f"{r.killer.seconds:.2f}" if r.killer else "-"
        out.write(f"{m.id:<10} {m.file + ':' + str(m.line):<34} {m.operator:<13} {r.status:<11} {seconds:>6} "
                  f"{r.unit:<9} {_killer_text(r):<44} {m.diff()}\n")
    score = "n/a" if summary["score"] is None else f"{100 * summary['score']:.1f}%"
    out.write(
        f"score {score}: {summary['killed']} killed of {summary['total']} mutants "
        f"({summary['survived']} survived, {summary['timed_out']} timed out, {summary['build_error']} build errors, "
        f"{summary['equivalent']} equivalent); search budget {budget['runs']} runs x "
        f"{'+'.join(budget['strategies'])} x {len(budget['scenarios'])} scenarios; "
        f"{budget.get('wall_seconds', 0):.0f}s\n")
    if summary["unit_score"] is not None:
        out.write(f"unit tests alone: {100 * summary['unit_score']:.1f}%; "
                  f"{summary['survived_search_killed_by_unit']} mutants the search missed are killed by a unit test\n")


def write_json(path: str, rows, summary: dict, budget: dict) -> None:
    document = {**summary, "budget": budget, "mutants": [r.as_json() for r in rows]}
    target = pathlib.Path(path)
    # Whole or not at all: a reader never sees half a report.
    handle, temporary = tempfile.mkstemp(dir=target.resolve().parent, prefix=".mutate-", suffix=".json")
    with os.fdopen(handle, "w") as stream:
        json.dump(document, stream, indent=2)
        stream.write("\n")
    os.replace(temporary, target)
