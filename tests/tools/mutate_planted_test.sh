#!/usr/bin/env bash
# tools/mutate.sh judges known mutants right: an obviously fatal one (decode frees its pages
# at every abort, B1's bug switched on in safe) is killed by the search; a change inside a
# status name and a change inside a comment, both provably equivalent, are reported
# equivalent (listed with a reason) and survived (not listed). Also: bad input is one line,
# exit 2. Uses its own scratch directory under the build tree (the first build takes minutes).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: mutate_planted_test.sh WORK_DIR}"
mkdir -p "$work"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 'Pcomment_only  a comment is not code\n' >"$out/equivalent.txt"
KVSIM_MUTATE_WORK="$work" python3 "$repo/tools/mutate/mutate.py" \
  --plant "$repo/tests/tools/mutate_planted.tsv" --planted-only --runs 200 \
  --equivalent "$out/equivalent.txt" --json "$out/rows.json" >"$out/table.txt" ||
  fail "mutate.py exited $? on the planted mutants"
cat "$out/table.txt"
status_of() {
  python3 -c 'import json,sys; rows={r["id"]: r for r in json.load(open(sys.argv[1]))["mutants"]}; r=rows[sys.argv[2]]; print(r["status"], r["invariant"] or "-", r["unit_tests"])' "$out/rows.json" "$1"
}
read -r status invariant unit < <(status_of Pfree_at_every_abort)
[[ "$status" == killed ]] || fail "the fatal mutant was $status, not killed"
[[ "$invariant" =~ ^I[0-9]$ ]] || fail "the fatal mutant was killed by '$invariant', not by an invariant"
read -r status _ _ < <(status_of Pstatus_name_text)
[[ "$status" == survived ]] || fail "a change inside a status name was $status, not survived"
read -r status _ _ < <(status_of Pcomment_only)
[[ "$status" == equivalent ]] || fail "the listed comment change was $status, not equivalent"
score="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["score"])' "$out/rows.json")"
[[ "$score" == 0.5 ]] || fail "score $score, want 0.5 (1 killed of 2 non-equivalent)"

# Bad input: one line on stderr, exit 2, no report written.
expect_usage_error() {
  local code=0
  KVSIM_MUTATE_WORK="$work" python3 "$repo/tools/mutate/mutate.py" "$@" --json "$out/bad.json" \
    >/dev/null 2>"$out/err" || code=$?
  [[ $code -eq 2 ]] || fail "'$*' exited $code, not 2"
  [[ $(wc -l <"$out/err") -eq 1 ]] || fail "'$*' printed $(wc -l <"$out/err") lines: $(cat "$out/err")"
  [[ ! -e "$out/bad.json" ]] || fail "'$*' wrote a report"
}
expect_usage_error --only core/no_such_file.cc
expect_usage_error --sample 0
expect_usage_error --no-such-flag
expect_usage_error --planted-only
printf 'core/page_ledger.cc\tno such text\tx\tbad\n' >"$out/bad_plant.tsv"
expect_usage_error --plant "$out/bad_plant.tsv" --planted-only
printf 'M0000\n' >"$out/no_reason.txt"
expect_usage_error --equivalent "$out/no_reason.txt" --list
echo "PASS"
