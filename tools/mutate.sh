#!/usr/bin/env bash
# Mutation testing of core/: how much of a broken core does kvsim's search catch?
#   tools/mutate.sh                      every mutant of core/, judged by the search
#   tools/mutate.sh --sample 5 --seed 1  a reproducible subset (CI's smoke test of the tool)
#   tools/mutate.sh --only core/page_ledger.cc --json out.json
#   tools/mutate.sh --list               the mutants, without building anything
# Installs what is missing (as tools/run.sh does), then runs tools/mutate/mutate.py; its
# --help says the rest. Exit 0 whatever the score; 2 when the tool itself cannot go on.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$repo_root/tools/run.sh" deps
exec python3 "$repo_root/tools/mutate/mutate.py" "$@"
