"""kvsim's mutation testing of core/: how much of a broken core does the search catch?

Run through tools/mutate.sh (see --help). Mutants come from mutation_operators.py, each is
built in a scratch tree (scratch_tree.py) and judged by the search alone (judge.py); the
core's unit tests are reported in their own column and never count for the score.
"""

from __future__ import annotations

import argparse
import dataclasses
import fcntl
import functools
import hashlib
import json
import os
import pathlib
import queue
import random
import signal
import subprocess
import sys
import threading
import time

import judge
import mutation_operators
import report
from scratch_tree import repository_files, scratch_tree, tool_failure

here = pathlib.Path(__file__).resolve().parent
repo = here.parent.parent

usage = """tools/mutate.sh [--only FILE]... [--sample N [--seed S]] [--runs N] [--strategies LIST]
                [--jobs N] [--no-unit] [--json FILE] [--work DIR] [--list]
                [--plant FILE [--planted-only]] [--equivalent FILE]"""

description = """Mutation testing of kvsim's core: every mutant is built in a scratch tree
outside the work tree and judged by the search alone (kvsim explore --variant safe over
every catalogue scenario, each strategy of the budget, stopping at the first finding).
The score is killed / (total - equivalent - build_error). Exit 0 whatever the score;
2 when the tool itself cannot go on."""


class one_line_parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit 2, like every kvsim command."""

    def error(self, message: str):  # type: ignore[override]
        sys.stderr.write(f"mutate: {message} (see tools/mutate.sh --help)\n")
        sys.exit(2)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = one_line_parser(prog="tools/mutate.sh", usage=usage, description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", default=[], metavar="FILE",
                        help="mutate only this core file (repeatable), e.g. core/page_ledger.cc")
    parser.add_argument("--sample", type=int, metavar="N", help="a reproducible random subset of N mutants")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="seed of --sample (default 1)")
    parser.add_argument("--runs", type=int, default=2000, metavar="N",
                        help="seeds per scenario and strategy (default 2000)")
    parser.add_argument("--strategies", default="random,pct:3", metavar="LIST",
                        help="comma-separated kvsim strategies (default random,pct:3)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="mutants judged at once, each in its own scratch tree (default 1)")
    parser.add_argument("--no-unit", action="store_true", help="skip the unit-test column")
    parser.add_argument("--json", metavar="FILE", help="write the rows and the score as JSON")
    parser.add_argument("--work", metavar="DIR",
                        help="scratch trees and ccache (default $KVSIM_MUTATE_WORK or /tmp/kvsim-mutate-<repo hash>)")
    parser.add_argument("--list", action="store_true", help="print the mutants and stop (no build)")
    parser.add_argument("--plant", metavar="FILE",
                        help="extra hand-written mutants, one per line: FILE<TAB>TEXT<TAB>REPLACEMENT<TAB>NAME")
    parser.add_argument("--planted-only", action="store_true", help="judge only the --plant mutants")
    parser.add_argument("--equivalent", metavar="FILE", default=str(here / "equivalent.txt"),
                        help="mutants known equivalent, each with its reason (default tools/mutate/equivalent.txt)")
    parser.add_argument("--skip", metavar="FILE", default=str(here / "skip.txt"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.sample is not None and args.sample < 1:
        parser.error("--sample must be at least 1")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if not 1 <= args.jobs <= 64:
        parser.error("--jobs must be between 1 and 64")
    if args.planted_only and not args.plant:
        parser.error("--planted-only needs --plant FILE")
    return args


def read_reasoned_lines(path: str, what: str) -> list[tuple[str, str]]:
    """(key, reason) per line of a '# comment'-able file in which every entry needs a reason."""
    entries = []
    try:
        lines = pathlib.Path(path).read_text().splitlines()
    except OSError as error:
        raise tool_failure(f"cannot read the {what} file {path}: {error.strerror}") from error
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, reason = line.partition(" ")
        if line.startswith("rule "):
            rule, _, reason = reason.strip().partition(" ")
            key = "rule " + rule
        if not reason.strip():
            raise tool_failure(f"{path}:{number}: '{key}' has no reason; every {what} entry needs one")
        entries.append((key, reason.strip()))
    return entries


@functools.lru_cache(maxsize=None)
def source_text(file: str) -> str:
    """A core file as the mutants were made from it (read once per run)."""
    return (repo / file).read_text()


def core_files(only: list[str], skipped_files: set[str]) -> list[str]:
    every = sorted(str(p.relative_to(repo)) for p in (repo / "core").glob("*.cc"))
    if not only:
        return [f for f in every if f not in skipped_files]
    chosen = []
    for name in only:
        normal = os.path.normpath(name)
        if normal not in every:
            raise tool_failure(f"--only {name}: not a source file of core/ (one of: {', '.join(every)})")
        chosen.append(normal)
    return chosen


def planted_mutants(path: str) -> list[mutation_operators.mutant]:
    planted = []
    try:
        lines = pathlib.Path(path).read_text().splitlines()
    except OSError as error:
        raise tool_failure(f"cannot read --plant {path}: {error.strerror}") from error
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            raise tool_failure(f"{path}:{number}: want FILE<TAB>TEXT<TAB>REPLACEMENT<TAB>NAME")
        file, find, replacement, name = fields
        try:
            text = source_text(file)
        except OSError:
            raise tool_failure(f"{path}:{number}: no file {file} in the repository") from None
        if text.count(find) != 1:
            raise tool_failure(f"{path}:{number}: '{find}' occurs {text.count(find)} times in {file}, not once")
        start = text.index(find)
        line_no = text.count("\n", 0, start) + 1
        whole = text.splitlines()[line_no - 1]
        planted.append(mutation_operators.mutant(
            id=f"P{name}", file=file, line=line_no, operator="planted", start=start,
            end=start + len(find), replacement=replacement, before=whole.strip(),
            after=whole.replace(find, replacement).strip()))
    return planted


@dataclasses.dataclass
class row:
    mutant: mutation_operators.mutant
    status: str = "pending"  # killed, survived, timed_out, build_error, equivalent
    killer: judge.verdict | None = None
    unit: str = "-"
    note: str = ""  # the equivalence reason or the build error

    def as_json(self) -> dict:
        m = self.mutant
        return {
            "id": m.id, "file": m.file, "line": m.line, "function": m.function, "operator": m.operator,
            "diff": m.diff(),
            "status": self.status,
            "scenario": self.killer.scenario if self.killer and self.killer.killed else None,
            "strategy": self.killer.strategy if self.killer and self.killer.killed else None,
            "invariant": self.killer.invariant if self.killer and self.killer.killed else None,
            "seconds": round(self.killer.seconds, 3) if self.killer else None,
            "unit_tests": self.unit, "note": self.note or None,
        }


def generate_rows(args: argparse.Namespace) -> list[row]:
    skips = read_reasoned_lines(args.skip, "skip")
    skipped_files = {key for key, _ in skips if ":" not in key}
    skipped_functions: dict[str, set[str]] = {}
    for key, _ in skips:
        if ":" in key:
            file, _, function = key.partition(":")
            skipped_functions.setdefault(file, set()).add(function)
    equivalents = dict(read_reasoned_lines(args.equivalent, "equivalent"))
    rows: list[row] = []
    if not args.planted_only:
        for file in core_files(args.only, skipped_files):
            text = source_text(file)
            for m in mutation_operators.generate(file, text, skipped_functions.get(file, set())):
                rows.append(row(m))
    if args.sample is not None and args.sample < len(rows):
        rows = random.Random(args.seed).sample(rows, args.sample)
        rows.sort(key=lambda r: (r.mutant.file, r.mutant.start, r.mutant.id))
    if args.plant:
        rows += [row(m) for m in planted_mutants(args.plant)]
    variant_rule = equivalents.get("rule variant_only")
    for r in rows:
        if r.mutant.id in equivalents:
            r.status, r.note = "equivalent", equivalents[r.mutant.id]
        elif variant_rule and r.mutant.variant_only:
            r.status, r.note = "equivalent", f"only under {r.mutant.variant_only}: {variant_rule}"
    return rows


def default_work_dir() -> pathlib.Path:
    if os.environ.get("KVSIM_MUTATE_WORK"):
        return pathlib.Path(os.environ["KVSIM_MUTATE_WORK"])
    digest = hashlib.sha1(str(repo).encode()).hexdigest()[:8]
    return pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"kvsim-mutate-{digest}"


def scenario_names(kvsim: pathlib.Path) -> list[str]:
    result = subprocess.run([str(kvsim), "list", "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        raise tool_failure("kvsim list failed in the scratch build: " + result.stderr.strip())
    names = [s["name"] for s in json.loads(result.stdout)]
    # The swarm, where this kvsim has it (`--generate`): scenarios nobody wrote.
    probe = subprocess.run([str(kvsim), "explore", "--help"], capture_output=True, text=True)
    if "--generate" in probe.stdout:
        names.append(judge.generated)
    return names


class progress:
    def __init__(self, total: int):
        self.total = total
        self.done = 0
        self.counts: dict[str, int] = {}
        self.started = time.monotonic()
        self.terminal = sys.stderr.isatty()
        self.lock = threading.Lock()

    def finished(self, r: row) -> None:
        with self.lock:
            self.done += 1
            self.counts[r.status] = self.counts.get(r.status, 0) + 1
            elapsed = time.monotonic() - self.started
            eta = elapsed / self.done * (self.total - self.done)
            tally = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
            what = r.status
            if r.killer and r.killer.killed:
                what += f" ({r.killer.scenario} {r.killer.invariant})"
            line = (f"mutate: [{self.done}/{self.total}] {r.mutant.id} {r.mutant.file}:{r.mutant.line} "
                    f"{r.mutant.operator}: {what} | {tally} | {elapsed:.0f}s, ~{eta:.0f}s left")
            if self.terminal:
                sys.stderr.write("\r\033[K" + line[:200])
                if self.done == self.total:
                    sys.stderr.write("\n")
            else:
                sys.stderr.write(line + "\n")
            sys.stderr.flush()


def judge_rows(args: argparse.Namespace, rows: list[row]) -> dict:
    work = pathlib.Path(args.work) if args.work else default_work_dir()
    work.mkdir(parents=True, exist_ok=True)
    lock_file = open(work / "lock", "w")
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise tool_failure(f"another mutation run is using {work}; give this one --work DIR") from None

    files = repository_files(repo)
    targets = ["kvsim"] + ([] if args.no_unit else ["kvsim_core_tests"])
    plan = judge.budget(args.runs, tuple(s for s in args.strategies.split(",") if s))
    if not plan.strategies:
        raise tool_failure("--strategies is empty")
    cores = os.cpu_count() or 1
    trees = [scratch_tree(work, k, targets) for k in range(args.jobs)]
    sys.stderr.write(f"mutate: scratch trees in {work}; building {', '.join(targets)} (the first build takes minutes)\n")
    for tree in trees:
        tree.sync(repo, files)
        tree.configure()
        ok, error = tree.build_targets(cores, timeout_s=3600)
        if not ok:
            raise tool_failure(f"the unmutated core does not build in {tree.build}: {error}")

    scenarios = scenario_names(trees[0].binary("kvsim"))
    baseline = judge.search(trees[0].binary("kvsim"), scenarios, plan, timeout_s=3600)
    if baseline.killed or baseline.timed_out:
        raise tool_failure(f"the unmutated core already fails the search ({baseline.scenario} {baseline.strategy}: "
                           f"{baseline.invariant or 'timed out'}); mutation scores mean nothing until it is clean")
    if not args.no_unit and judge.unit_tests(trees[0].binary("kvsim_core_tests"), 600) != "survived":
        raise tool_failure("the unmutated core fails its unit tests (kvsim_core_tests)")
    # A mutant may slow the search down (more steps, more retries) without hanging it: allow
    # several times the clean run before calling it a timeout.
    search_timeout_s = 5 * baseline.seconds + 30
    sys.stderr.write(f"mutate: {len(scenarios)} scenarios x {len(plan.strategies)} strategies x {plan.runs} runs; "
                     f"clean core judged in {baseline.seconds:.1f}s; timeout per mutant {search_timeout_s:.0f}s\n")

    # The texts the mutants were made from, read once: an edit of the work tree during a long
    # run must not become part of every later mutant.
    sources = {f: source_text(f) for f in {r.mutant.file for r in rows}}
    to_judge: queue.Queue[row] = queue.Queue()
    for r in rows:
        if r.status == "pending":
            to_judge.put(r)
    shown = progress(to_judge.qsize())
    build_parallel = max(1, cores // args.jobs)
    failures: list[BaseException] = []

    def worker(tree: scratch_tree) -> None:
        originals: dict[str, str] = {}
        try:
            while not failures:
                try:
                    r = to_judge.get_nowait()
                except queue.Empty:
                    return
                m = r.mutant
                original = originals.setdefault(m.file, sources[m.file])
                tree.write_source(m.file, m.apply(original))
                try:
                    ok, error = tree.build_targets(build_parallel, timeout_s=900)
                    if not ok:
                        r.status, r.note = "build_error", error
                    else:
                        r.killer = judge.search(tree.binary("kvsim"), scenarios, plan, search_timeout_s)
                        r.status = "killed" if r.killer.killed else "timed_out" if r.killer.timed_out else "survived"
                        if not args.no_unit:
                            r.unit = judge.unit_tests(tree.binary("kvsim_core_tests"), 120)
                finally:
                    tree.write_source(m.file, original)
                shown.finished(r)
        except BaseException as error:  # noqa: BLE001 - reported once, after the others stop
            failures.append(error)
        finally:
            for file, text in originals.items():
                tree.write_source(file, text)

    threads = [threading.Thread(target=worker, args=(tree,)) for tree in trees]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        failures.append(KeyboardInterrupt())  # workers stop after their mutant and restore
        for t in threads:
            t.join()
        raise
    if failures:
        raise failures[0]
    return {"runs": plan.runs, "strategies": list(plan.strategies), "scenarios": scenarios,
            "clean_search_seconds": round(baseline.seconds, 3), "timeout_seconds": round(search_timeout_s, 1)}


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `--list | head` ends quietly
    args = parse_arguments(argv)
    try:
        if args.json and not pathlib.Path(args.json).resolve().parent.is_dir():
            raise tool_failure(f"--json {args.json}: its directory does not exist")
        rows = generate_rows(args)
        if args.list:
            report.print_mutant_list(sys.stdout, rows)
            return 0
        started = time.monotonic()
        budget = judge_rows(args, rows)
        budget["wall_seconds"] = round(time.monotonic() - started, 1)
        summary = report.summarise(rows)
        report.print_table(sys.stdout, rows, summary, budget)
        if args.json:
            report.write_json(args.json, rows, summary, budget)
        return 0
    except tool_failure as failure:
        sys.stderr.write(f"mutate: {failure}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("mutate: interrupted; the scratch sources are restored\n")
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
