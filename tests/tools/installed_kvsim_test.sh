#!/usr/bin/env bash
# tests/tools/installed_kvsim_test.sh BUILD_DIR SOURCE_DIR
#
# The installed kvsim works on its own, from any directory: `cmake --install` into a fresh
# prefix, then from an unrelated working directory: --version names the version and the
# commit, list reads the installed catalogue (share/kvsim, found relative to the binary),
# explore --all holds every expectation, and check passes on the repository's failure corpus.
# The docs are installed next to it. Exit 0 with one "ok" line, else the failing step.
set -uo pipefail
build="$(cd "$1" && pwd)"
source_dir="$(cd "$2" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kvsim-installed.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "installed_kvsim_test: $*"; exit 1; }

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" 2>&1 ||
  { tail -n 20 "$work/install.log"; fail "cmake --install failed"; }
kvsim="$work/prefix/bin/kvsim"
[[ -x "$kvsim" ]] || fail "no bin/kvsim under the prefix"
[[ -f "$work/prefix/share/kvsim/catalogue.json" ]] || fail "no share/kvsim/catalogue.json"
[[ -f "$work/prefix/share/doc/kvsim/DOMAIN.md" ]] || fail "the docs are not installed"

mkdir -p "$work/elsewhere"
cd "$work/elsewhere" || fail "cannot enter $work/elsewhere"
version="$("$kvsim" --version)" || fail "--version failed"
[[ "$version" =~ ^kvsim\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-f]+(-dirty)?\)$|\(commit\ unknown\)$ ]] ||
  fail "--version says '$version'"
"$kvsim" list > list.txt || fail "list failed"
grep -q "from $work/prefix/share/kvsim/catalogue.json)" list.txt ||
  fail "list did not read the installed catalogue: $(tail -n 1 list.txt)"
"$kvsim" explore --all --runs 2000 --jobs 2 > explore.txt 2>&1 || { cat explore.txt; fail "explore --all failed"; }
grep -q "every expectation held" explore.txt || fail "explore --all: $(tail -n 1 explore.txt)"
"$kvsim" check "$source_dir/tests/corpus" > check.txt 2>&1 || { tail -n 5 check.txt; fail "check tests/corpus failed"; }
echo "installed_kvsim_test: ok ($version)"
