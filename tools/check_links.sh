#!/usr/bin/env bash
# The link half of the layer rules: a program must contain no code of the libraries it must not
# link. The include roots (CMakeLists.txt's kvsim_layer_includes) keep a layer from naming an
# upper layer's headers; this checks what the linker pulled in, which an include root cannot
# see (a library linked through another's public links, an inline function's body).
#
# A symbol counts when a library defines it strongly (nm types T, D, B, R: functions, data,
# constants) and the program defines it too. Weak symbols (templates and inline functions
# both may instantiate, such as std::vector<int>'s) say nothing about who linked whom.
# Usage:
#   tools/check_links.sh PROGRAM LIBRARY.a...
# Prints one line per shared symbol (demangled) and exits 1 if there is any; 2 on misuse.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "check_links: usage: check_links.sh PROGRAM LIBRARY.a..." >&2
  exit 2
fi
program="$1"; shift
for file in "$program" "$@"; do
  [[ -f "$file" ]] || { echo "check_links: no such file: $file" >&2; exit 2; }
done

strong_symbols() {
  # --defined-only: what the file defines; the second field is the symbol's type.
  nm --defined-only "$@" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDBR]$/ { print $3 }' | sort -u
}

program_symbols="$(mktemp)"
library_symbols="$(mktemp)"
trap 'rm -f "$program_symbols" "$library_symbols"' EXIT
if ! nm --defined-only "$program" > /dev/null 2>&1; then
  echo "check_links: $program: not an object file nm can read" >&2
  exit 2
fi
strong_symbols "$program" > "$program_symbols"
strong_symbols "$@" > "$library_symbols"

shared="$(comm -12 "$program_symbols" "$library_symbols")"
if [[ -z "$shared" ]]; then
  echo "check_links: $(basename "$program") defines none of the $(wc -l < "$library_symbols") symbols of $(printf '%s ' "${@##*/}")"
  exit 0
fi
count="$(wc -l <<< "$shared")"
# The first 20 only, cut before demangling: a reader stopping early would end the script
# (SIGPIPE under pipefail) before its count line.
c++filt <<< "$(head -20 <<< "$shared")" | sed "s|^|check_links: $(basename "$program") links |"
echo "check_links: $(basename "$program") defines $count symbol(s) of $(printf '%s ' "${@##*/}")"
exit 1
