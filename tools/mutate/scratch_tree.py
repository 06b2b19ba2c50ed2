"""A scratch copy of the repository and its build, outside the work tree.

Each worker owns one: WORK/wK/src (the repository's files, tracked and untracked but not
ignored) and WORK/wK/build (CMake, Release, warnings not fatal: a mutant that leaves a variable
unused is still a mutant). Files are copied only when their content differs, so the build
stays incremental across runs; ccache, with its base directory at WORK, lets the second
worker's first build reuse the first one's objects.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import time


class tool_failure(Exception):
    """The tool itself cannot go on (exit 2): not a verdict on a mutant."""


def repository_files(repo: pathlib.Path) -> list[str]:
    try:
        listed = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True,
            capture_output=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as error:
        raise tool_failure(f"cannot list the repository's files with git: {error}") from error
    return [f for f in listed.split("\0") if f and (repo / f).is_file()]


class scratch_tree:
    def __init__(self, work: pathlib.Path, index: int, targets: list[str]):
        self.root = work / f"w{index}"
        self.src = self.root / "src"
        self.build = self.root / "build"
        self.work = work
        self.targets = targets

    def sync(self, repo: pathlib.Path, files: list[str]) -> None:
        for name in files:
            source = repo / name
            copy = self.src / name
            data = source.read_bytes()
            if copy.is_file() and copy.read_bytes() == data:
                continue
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(data)
            shutil.copymode(source, copy)

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["CCACHE_BASEDIR"] = str(self.work)
        env.setdefault("CCACHE_DIR", str(self.work / "ccache"))
        return env

    def configure(self) -> None:
        if (self.build / "CMakeCache.txt").is_file():
            return
        command = [
            "cmake", "-S", str(self.src), "-B", str(self.build),
            "-DCMAKE_BUILD_TYPE=Release", "-DKVSIM_WERROR=OFF", "-DKVSIM_REAL_BACKEND=OFF",
        ]
        if shutil.which("ninja"):
            command += ["-G", "Ninja"]
        if shutil.which("ccache"):
            command += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        result = subprocess.run(command, capture_output=True, text=True, env=self.environment())
        if result.returncode != 0:
            raise tool_failure(f"configuring the scratch build in {self.build} failed: "
                               + _last_line(result.stdout + result.stderr))

    def build_targets(self, parallel: int, timeout_s: float) -> tuple[bool, str]:
        """Builds the judged targets. (ok, last line of the compiler's complaint)."""
        command = ["cmake", "--build", str(self.build), "--parallel", str(parallel), "--target", *self.targets]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                                    env=self.environment())
        except subprocess.TimeoutExpired:
            return False, f"build took over {timeout_s:.0f}s"
        if result.returncode == 0:
            return True, ""
        errors = [line for line in (result.stdout + result.stderr).splitlines() if "error" in line]
        return False, (errors[0] if errors else _last_line(result.stdout + result.stderr)).strip()

    def write_source(self, relative: str, text: str) -> None:
        path = self.src / relative
        path.write_text(text)
        # A fresh, strictly later mtime: the build must see every rewrite, however fast.
        now = time.time_ns()
        os.utime(path, ns=(now, now))

    def binary(self, name: str) -> pathlib.Path:
        return self.build / "bin" / name


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"
