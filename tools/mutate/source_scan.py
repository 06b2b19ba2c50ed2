"""Reading C++ source for mutation: which characters are code, and where functions are.

The mutation operators (mutation_operators.py) search the *code view* of a file: the same text
with comments, string and character literals and preprocessor lines blanked out, so that an
operator never mutates a log message or an #include. Offsets in the code view are offsets in
the file, so a mutation found there is applied to the real text at the same place.
"""

from __future__ import annotations

import dataclasses
import re


def code_view(text: str) -> str:
    """The text with comments, literals and preprocessor lines replaced by spaces.

    Quotes stay (as '"' and "'") so that a literal still reads as one token and operators
    never join what was on either side of it; newlines stay so line numbers match.
    """
    out = list(text)
    i = 0
    n = len(text)
    at_line_start = True

    def blank(start: int, end: int) -> None:
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if at_line_start and c in " \t":
            i += 1
            continue
        if at_line_start and c == "#":
            end = i
            while end < n and text[end] != "\n":
                # A backslash continues a directive on the next line.
                if text[end] == "\\" and end + 1 < n and text[end + 1] == "\n":
                    end += 2
                    continue
                end += 1
            blank(i, end)
            i = end
            continue
        at_line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
            continue
        raw = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
        if raw:
            close = ")" + raw.group(1) + '"'
            end = text.find(close, i + raw.end())
            end = n if end < 0 else end + len(close)
            blank(i + 1, end - 1)
            i = end
            continue
        if c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                i += 1
                continue
            end = i + 1
            while end < n and text[end] != c and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
            blank(i + 1, end - 1)
            i = end
            continue
        i += 1
    return "".join(out)


def matching_close(code: str, open_at: int) -> int:
    """Index of the bracket that closes the one at open_at (-1 if unbalanced)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opener = code[open_at]
    closer = pairs[opener]
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == opener:
            depth += 1
        elif code[k] == closer:
            depth -= 1
            if depth == 0:
                return k
    return -1


@dataclasses.dataclass(frozen=True)
class function_body:
    """A function defined in the file: its qualified name, return type and body braces."""

    name: str  # as written: "page_ledger::release" or "ensure_sodium"
    return_type: str  # as written, whitespace collapsed: "void", "status<ledger_error>"
    open_brace: int
    close_brace: int


_not_functions = re.compile(r"^\s*(namespace|struct|class|enum|union|extern)\b")
_declarator = re.compile(r"([A-Za-z_~][\w:~]*(?:operator\S+?)?)\s*\($")


def functions(code: str) -> list[function_body]:
    """Top-level function definitions (not lambdas, not bodies nested in other functions).

    A definition is a '{' whose preceding declaration ends in a parameter list, optionally
    followed by 'const', 'noexcept', 'override' or a constructor's member initializers.
    """
    found: list[function_body] = []
    i = 0
    n = len(code)
    statement_start = 0
    while i < n:
        c = code[i]
        if c in ";}":
            statement_start = i + 1
        elif c == "{":
            head = code[statement_start:i]
            close = matching_close(code, i)
            parsed = _parse_head(head) if not _not_functions.match(head) else None
            if parsed and close > 0:
                found.append(function_body(parsed[0], parsed[1], i, close))
                i = close + 1
                statement_start = i
                continue
            statement_start = i + 1
        i += 1
    return found


def _parse_head(head: str) -> tuple[str, str] | None:
    flat = " ".join(head.split())
    if "(" not in flat or flat.startswith("template"):
        template_free = re.sub(r"^template\s*<[^{};]*?>\s*", "", flat)
        if template_free == flat or "(" not in template_free:
            return None
        flat = template_free
    # The declarator is the last name before the first top-level '(' of the head.
    paren = flat.find("(")
    match = _declarator.search(flat[: paren + 1])
    if not match:
        return None
    name = match.group(1)
    if name in {"if", "for", "while", "switch", "catch", "return", "sizeof"}:
        return None
    if "=" in flat[:paren] or "[" in flat[:paren]:
        return None  # an initialised variable or a lambda, not a definition
    return_type = flat[: match.start()].strip()
    for word in ("static", "inline", "constexpr", "virtual", "explicit", "[[nodiscard]]"):
        return_type = re.sub(rf"(^|\s){re.escape(word)}(\s|$)", " ", return_type).strip()
    return name, return_type


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
