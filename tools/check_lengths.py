#!/usr/bin/env python3
"""Function and file lengths of the C++ sources: a function body of more than --function-max
lines or a file of more than --file-max lines is a finding, unless tools/length_exceptions.txt
lists it with a reason.

Usage:
  tools/check_lengths.py [--function-max N] [--file-max N] [--exceptions FILE] [DIR ...]

With no DIR it checks the project's C++ folders. Prints one line per finding
(`check_lengths: FILE:LINE: ...`) and exits 1 if there is any, 2 on misuse (an unreadable
exceptions file, an exception that no longer matches anything: a stale reason hides nothing and
must go).

A function is found by a brace scan of the code with comments, strings and character literals
blanked: a `{` whose statement head ends in a parameter list (and qualifiers, a trailing return
type or a constructor's initialisers) opens a function unless it sits inside another function
(a lambda's lines count towards the function that holds it). Its length is the lines from that
`{` to its `}`, both included.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_DIRS = ["core", "sim", "scenarios", "properties", "real_backend", "tools", "tests", "examples"]
SUFFIXES = {".h", ".hpp", ".cc", ".cpp", ".cu"}
CONTAINER = re.compile(r'^\s*(template\s*<.*>\s*)?(namespace\b|class\b|struct\b|union\b|enum\b|extern\s+"C")', re.S)
FUNCTION_HEAD = re.compile(r"\)\s*(const|override|final|noexcept(\([^()]*\))?|mutable|&|&&|->[^{;]*|:[^;{]*|\s)*$", re.S)
NAME = re.compile(r"(~?[A-Za-z_][\w:<>,~ ]*?)\s*\(")


def blank_comments_and_literals(text: str) -> str:
    """The text with comments, string and character literals replaced by blanks of the same
    line structure, so braces and semicolons inside them do not count."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        raw = re.match(r'R"([^(\s]{0,16})\(', text[i : i + 20])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = ")" + raw.group(1) + '"'
            j = text.find(end, i)
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        c = text[i]
        # A quote after a digit is a digit separator (1'000), not a character literal.
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def function_name(head: str) -> str:
    """The name before the first parameter list of a function's head (a constructor's
    initialisers and a trailing return type come after it); a test's is Suite.Case."""
    head = " ".join(head.split())
    for m in re.finditer(r"\(", head):
        before = head[: m.start()].rstrip()
        if before.endswith("operator"):  # operator()(...): the first pair is the name's
            return before.split()[-1] + "()"
        name = re.search(r"(operator\s*\S+|~?[A-Za-z_][\w:]*(<[^()]*>)?)$", before)
        if not name:
            continue
        if name.group(1) in ("TEST", "TEST_F", "TEST_P", "RC_GTEST_PROP", "RC_GTEST_FIXTURE_PROP"):
            close = head.find(")", m.start())
            return ".".join(part.strip() for part in head[m.start() + 1 : close].split(",")[:2])
        return name.group(1)
    return head[-60:].strip()


def functions(text: str) -> list[tuple[int, int, str]]:
    """(length in lines, first line, name) of every function body in `text`."""
    code = blank_comments_and_literals(text)
    stack: list[tuple[str, int, str]] = []  # kind, line of its `{`, name
    line, head_start = 1, 0
    found = []
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[head_start:i]
            # Preprocessor lines belong to no statement.
            head = "\n".join(l for l in head.split("\n") if not l.lstrip().startswith("#"))
            if any(kind == "function" for kind, _, _ in stack):
                kind = "block"
            elif CONTAINER.search(head) or head.rstrip().endswith("="):
                kind = "container"
            elif "(" in head and FUNCTION_HEAD.search(head + " "):
                kind = "function"
            else:
                kind = "container"
            stack.append((kind, line, function_name(head) if kind == "function" else ""))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "function":
                    found.append((line - start + 1, start, name))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return found


def read_exceptions(path: pathlib.Path) -> dict[str, str]:
    """`function FILE:NAME  reason` or `file FILE  reason`, two spaces before the reason."""
    exceptions = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        entry = raw.strip()
        if not entry or entry.startswith("#"):
            continue
        key, sep, reason = entry.partition("  ")
        kind = key.split(" ", 1)[0]
        if not sep or not reason.strip() or kind not in ("function", "file") or " " not in key:
            raise ValueError(f"{path}:{number}: expected 'function FILE:NAME  reason' or 'file FILE  reason'")
        exceptions[key] = reason.strip()
    return exceptions


def sources(dirs: list[pathlib.Path]) -> list[pathlib.Path]:
    files = []
    for d in dirs:
        files += [p for p in sorted(d.rglob("*")) if p.suffix in SUFFIXES and p.is_file()]
    return files


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="check_lengths", add_help=True)
    parser.add_argument("--function-max", type=int, default=80)
    parser.add_argument("--file-max", type=int, default=800)
    parser.add_argument("--exceptions", type=pathlib.Path, default=REPO / "tools" / "length_exceptions.txt")
    parser.add_argument("dirs", nargs="*", type=pathlib.Path)
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        return 2
    dirs = args.dirs or [REPO / d for d in DEFAULT_DIRS]
    for d in dirs:
        if not d.is_dir():
            print(f"check_lengths: no such directory: {d}", file=sys.stderr)
            return 2
    try:
        exceptions = read_exceptions(args.exceptions) if args.exceptions.exists() else {}
    except (OSError, ValueError) as error:
        print(f"check_lengths: {error}", file=sys.stderr)
        return 2
    used: set[str] = set()
    findings = 0
    for path in sources(dirs):
        shown = path.resolve().relative_to(REPO) if path.resolve().is_relative_to(REPO) else path
        text = path.read_text(errors="replace")
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > args.file_max:
            key = f"file {shown}"
            if key in exceptions:
                used.add(key)
            else:
                print(f"check_lengths: {shown}:1: {lines} lines (at most {args.file_max})")
                findings += 1
        for length, start, name in functions(text):
            if length <= args.function_max:
                continue
            key = f"function {shown}:{name}"
            if key in exceptions:
                used.add(key)
                continue
            print(f"check_lengths: {shown}:{start}: {name} is {length} lines (at most {args.function_max})")
            findings += 1
    stale = sorted(k for k in exceptions if k not in used) if not args.dirs else []
    for key in stale:
        print(f"check_lengths: {args.exceptions.name}: '{key}' matches nothing any more: remove it", file=sys.stderr)
    if stale:
        return 2
    if findings:
        print(f"check_lengths: {findings} finding(s)", file=sys.stderr)
        return 1
    print("check_lengths: clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
