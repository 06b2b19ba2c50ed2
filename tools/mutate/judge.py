"""Judging one build of the core: the search's verdict, and the unit tests' in their own column.

The search verdict is `kvsim explore --scenario S --variant safe` over every catalogue
scenario, and `kvsim explore --generate` (the scenario swarm), for every strategy of the
budget, each ending at its first finding: the first
scenario that reports one kills the mutant. A crash of the search (the core's own
assertion aborting, a segfault) is a kill too: the search drove the mutated core somewhere it
cannot survive. The unit tests (kvsim_core_tests) never count for the search's score.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import signal
import subprocess
import tempfile
import time


generated = "generated"


@dataclasses.dataclass
class verdict:
    killed: bool
    timed_out: bool = False
    scenario: str = ""
    strategy: str = ""
    invariant: str = ""  # I1..I9, "crash: SIGABRT", "exit 2: <message>"
    seconds: float = 0.0


@dataclasses.dataclass(frozen=True)
class budget:
    runs: int  # seeds 1..runs per scenario and strategy
    strategies: tuple[str, ...]


def _run(command: list[str], timeout_s: float, env: dict | None = None) -> tuple[int | None, str, str]:
    """(return code or None on timeout, stdout, stderr); the whole process group dies on timeout."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, env=env)
    try:
        out, err = process.communicate(timeout=max(timeout_s, 0.1))
        return process.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        return None, out, err


def _signal_name(code: int) -> str:
    number = -code if code < 0 else code - 128
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def search(kvsim: pathlib.Path, scenarios: list[str], plan: budget, timeout_s: float) -> verdict:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kvsim-mutate-judge-") as scratch:
        rows_file = pathlib.Path(scratch) / "rows.json"
        for scenario in scenarios:
            for strategy in plan.strategies:
                left = timeout_s - (time.monotonic() - started)
                if left <= 0:
                    return verdict(False, timed_out=True, scenario=scenario, strategy=strategy,
                                   seconds=time.monotonic() - started)
                rows_file.unlink(missing_ok=True)
                # The scenario swarm (`--generate`, a fresh scenario per seed) is judged like a
                # catalogue scenario, under the name its rows carry.
                which = ["--generate"] if scenario == generated else ["--scenario", scenario]
                code, _, err = _run(
                    [str(kvsim), "explore", *which, "--variant", "safe", "--strategy",
                     strategy, "--runs", str(plan.runs), "--stop-at-first", "--json", str(rows_file)],
                    left,
                )
                seconds = time.monotonic() - started
                if code is None:
                    return verdict(False, timed_out=True, scenario=scenario, strategy=strategy, seconds=seconds)
                if code == 0:
                    continue
                if code == 1 and _findings(rows_file) == 0:
                    # Clean but `unexercised` (a declared code probe missed): no bug was
                    # found, so the mutant is not killed by it.
                    continue
                if code == 1:
                    return verdict(True, scenario=scenario, strategy=strategy,
                                   invariant=_first_invariant(rows_file), seconds=seconds)
                if code == 2:
                    message = (err.strip().splitlines() or ["(no message)"])[-1]
                    return verdict(True, scenario=scenario, strategy=strategy,
                                   invariant=f"exit 2: {message}", seconds=seconds)
                return verdict(True, scenario=scenario, strategy=strategy,
                               invariant=f"crash: {_signal_name(code)}", seconds=seconds)
    return verdict(False, seconds=time.monotonic() - started)


def _findings(rows_file: pathlib.Path) -> int | None:
    """How many findings the search's row reports; None when the rows cannot be read."""
    try:
        return int(json.loads(rows_file.read_text())[0]["findings"])
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return None


def _first_invariant(rows_file: pathlib.Path) -> str:
    try:
        rows = json.loads(rows_file.read_text())
        first = rows[0].get("first_finding") or {}
        return str(first.get("invariant") or "finding")
    except (OSError, ValueError, IndexError, AttributeError):
        return "finding"


def unit_tests(binary: pathlib.Path, timeout_s: float) -> str:
    """'killed', 'survived' or 'timed_out' for the core's unit tests."""
    env = dict(os.environ)
    env.setdefault("RC_PARAMS", "seed=20261130 max_success=100")
    code, _, _ = _run([str(binary), "--gtest_brief=1"], timeout_s, env)
    if code is None:
        return "timed_out"
    return "survived" if code == 0 else "killed"
