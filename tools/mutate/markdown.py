"""Renders a tools/mutate.sh --json report as the Markdown of docs/mutation.md.

  python3 tools/mutate/markdown.py REPORT.json --notes tools/mutate/survivor_notes.txt \
      --command "tools/mutate.sh --jobs 2 --json REPORT.json" \
      --section tools/mutate/planted.md --section tools/mutate/history.md > docs/mutation.md

Each --section is hand-written Markdown placed after the run's summary (the planted broken
cores, the scores of earlier runs): the page is rendered whole from its sources every time.

The notes file says why survivors survive, one line per function (or per function and
operator): `core/x.cc:name[ operator]  why`. Every function with a survivor needs a note; a
survivor without one is an error, so the document never lists a survivor without its reason.
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys

import mutation_operators

here = pathlib.Path(__file__).resolve().parent
repo = here.parent.parent


def read_notes(path: str) -> dict[str, str]:
    notes = {}
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, why = line.partition("  ")
        notes[key.strip()] = why.strip()
    return notes


def functions_by_id(rows) -> dict[str, str]:
    """The function of every mutant (older reports lack the field: regenerate by id)."""
    known = {r["id"]: r["function"] for r in rows if r.get("function")}
    if len(known) < len(rows):
        for file in sorted({r["file"] for r in rows}):
            path = repo / file
            if path.is_file():
                for m in mutation_operators.generate(file, path.read_text()):
                    known.setdefault(m.id, m.function)
    return known


def grouped(rows, field: str):
    """(value, rows, status counts, score text) per value of `field`, in order."""
    groups = collections.defaultdict(list)
    for r in rows:
        groups[r[field]].append(r)
    for value, group in sorted(groups.items()):
        c = collections.Counter(r["status"] for r in group)
        scored = len(group) - c["equivalent"] - c["build_error"]
        yield value, group, c, (f"{100 * c['killed'] / scored:.0f}%" if scored else "-")


def baseline_section(baseline: dict, report: dict, baseline_label: str, label: str) -> list[str]:
    def row(name: str, r: dict) -> str:
        b = r["budget"]
        return (f"| {name} | {len(b['scenarios'])} | {100 * r['score']:.1f}% | {r['killed']} | "
                f"{r['survived']} | {r['timed_out']} | {r['build_error']} | {r['equivalent']} | "
                f"{b.get('wall_seconds', 0) / 60:.0f} min |")
    return [
        "## Before and after\n",
        "| run | searches judged | search score | killed | survived | timed out | build errors | equivalent | wall (2 cores) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        row(baseline_label, baseline),
        row(label, report),
        "",
    ]


def render(report: dict, notes: dict[str, str], command: str, before: list[str] | None = None,
           sections: list[str] | None = None) -> str:
    rows = report["mutants"]
    function_of = functions_by_id(rows)
    out = []
    score = report["score"]
    budget = report["budget"]
    out.append("# Mutation testing of the core\n")
    out.append(
        "How much of a broken core does kvsim's search catch? `tools/mutate.sh` mutates "
        "`core/*.cc` by rule, builds each mutant in a scratch tree and judges it by the search alone "
        "(`kvsim explore --scenario S --variant safe --stop-at-first` over every catalogue scenario and "
        "strategy of the budget). The README says how it works; this page is the latest full run.\n")
    out.append("## The run\n")
    out.append(f"```sh\n{command}\n```\n")
    out.append(
        f"- **Search score: {100 * score:.1f}%** ({report['killed']} killed of "
        f"{report['total'] - report['equivalent'] - report['build_error']} non-equivalent mutants that build)")
    out.append(
        f"- {report['total']} mutants: {report['killed']} killed, {report['survived']} survived, "
        f"{report['timed_out']} timed out, {report['build_error']} build errors (not scored), "
        f"{report['equivalent']} equivalent (reasons in `tools/mutate/equivalent.txt`)")
    if report.get("unit_score") is not None:
        out.append(
            f"- The core's unit tests alone: {100 * report['unit_score']:.1f}%; "
            f"{report['survived_search_killed_by_unit']} of the search's survivors are killed by a unit test "
            "(they still count as survived: the search must find them itself)")
    out.append(
        f"- Budget per mutant: {budget['runs']} seeds x {' + '.join(budget['strategies'])} x "
        f"{len(budget['scenarios'])} scenarios; the clean core takes {budget['clean_search_seconds']:.1f}s "
        f"to judge; a mutant times out after {budget['timeout_seconds']:.0f}s")
    out.append(f"- Wall time: {budget.get('wall_seconds', 0) / 60:.0f} min on this machine (2 cores, `--jobs 2`)\n")
    out.extend(before or [])
    for section in sections or []:
        out.append(section.rstrip("\n") + "\n")

    out.append("## By file\n")
    out.append("| file | mutants | killed | survived | timed out | build error | equivalent | score |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for file, group, c, pct in grouped(rows, "file"):
        out.append(f"| `{file}` | {len(group)} | {c['killed']} | {c['survived']} | {c['timed_out']} | "
                   f"{c['build_error']} | {c['equivalent']} | {pct} |")
    out.append("")
    out.append("## By operator\n")
    out.append("| operator | mutants | killed | survived | score |")
    out.append("|---|---:|---:|---:|---:|")
    for operator, group, c, pct in grouped(rows, "operator"):
        out.append(f"| {operator} | {len(group)} | {c['killed']} | {c['survived'] + c['timed_out']} | {pct} |")
    out.append("")
    killers = collections.Counter((r["scenario"], (r["invariant"] or "").split(":")[0]) for r in rows if r["status"] == "killed")
    out.append("## What kills\n")
    out.append("| scenario | invariant | mutants killed first there |")
    out.append("|---|---|---:|")
    for (scenario, invariant), n in killers.most_common():
        out.append(f"| {scenario} | {invariant} | {n} |")
    out.append("")

    out.append("## Survivors, and why they survive\n")
    out.append("What the search does not see yet: each group is a function of the core, with why the "
               "search does not see its mutants, then the mutants (`tools/mutate.sh --list` shows them all; "
               "`--only FILE` reruns a file). Timed-out mutants are listed with the survivors.\n")
    survivors = [r for r in rows if r["status"] in ("survived", "timed_out")]
    groups = collections.defaultdict(list)
    for r in survivors:
        groups[(r["file"], function_of.get(r["id"], ""))].append(r)
    missing = []
    for (file, function), group in sorted(groups.items()):
        out.append(f"### `{file}` `{function or '(outside functions)'}` ({len(group)})\n")
        general = notes.get(f"{file}:{function}")
        if general:
            out.append(general + "\n")
        for r in sorted(group, key=lambda r: (r["line"], r["operator"])):
            specific = notes.get(f"{file}:{function} {r['operator']}") or notes.get(r["id"])
            if not (general or specific):
                missing.append(f"{file}:{function} ({r['id']})")
            why = f" — {specific}" if specific else ""
            status = " (timed out)" if r["status"] == "timed_out" else ""
            unit = " [a unit test kills it]" if r.get("unit_tests") == "killed" else ""
            diff = r["diff"].replace("|", "\\|")
            out.append(f"- `{r['id']}` line {r['line']}, {r['operator']}{status}{unit}: `{diff}`{why}")
        out.append("")
    if missing:
        raise SystemExit("markdown: survivors without a note: " + "; ".join(missing[:20]) +
                         (f" and {len(missing) - 20} more" if len(missing) > 20 else ""))
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report")
    parser.add_argument("--notes", default=str(here / "survivor_notes.txt"))
    parser.add_argument("--command", default="tools/mutate.sh --jobs 2 --json mutation.json")
    parser.add_argument("--baseline", help="an earlier report, shown beside this one")
    parser.add_argument("--baseline-label", default="before")
    parser.add_argument("--label", default="after")
    parser.add_argument("--section", action="append", default=[],
                        help="a hand-written Markdown file placed after the summary (repeatable)")
    args = parser.parse_args()
    report = json.loads(pathlib.Path(args.report).read_text())
    before = None
    if args.baseline:
        baseline = json.loads(pathlib.Path(args.baseline).read_text())
        before = baseline_section(baseline, report, args.baseline_label, args.label)
    sections = [pathlib.Path(path).read_text() for path in args.section]
    sys.stdout.write(render(report, read_notes(args.notes), args.command, before, sections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
