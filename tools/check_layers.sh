#!/usr/bin/env bash
# The core's purity rule, for what an include path cannot express (see CMakeLists.txt's
# kvsim_layer_includes for the part the compiler enforces). core/ is production code: it
# includes nothing from sim/ or real_backend/, no Boost.Fiber, CUDA or NCCL, and uses no
# threads, wall clocks or unseeded randomness (DESIGN.md, "Layers").
#   tools/check_layers.sh [CORE_DIR]     default: core/ next to this script's parent
# Prints one line per violation (file:line: what) and exits 1 if there is any.
set -euo pipefail

core_dir="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/core}"
[[ -d "$core_dir" ]] || { echo "check_layers: no such directory: $core_dir" >&2; exit 2; }

# pattern<TAB>why
rules=$(cat <<'RULES'
#include[[:space:]]*["<](\.\./)*sim/	includes the simulator
#include[[:space:]]*["<](\.\./)*real_backend/	includes the real backend
#include[[:space:]]*["<](\.\./)*(scenarios|properties|tools)/	includes an upper layer
#include[[:space:]]*<boost/fiber	includes Boost.Fiber
#include[[:space:]]*<boost/	includes Boost (the core uses the standard library only)
#include[[:space:]]*[<"](cuda|cuda_runtime|cuda_runtime_api|nccl)[^>"]*[>"]	includes CUDA or NCCL
#include[[:space:]]*<(thread|mutex|shared_mutex|condition_variable|future|chrono|random|ctime)>	uses threads, clocks or randomness
std::(thread|jthread|mutex|rand|random_device|mt19937|chrono)\b	uses threads, clocks or randomness
\b(s?rand|time|clock_gettime|gettimeofday|getenv)[[:space:]]*\(	uses wall clocks, randomness or the environment
\bthread_local\b	uses thread-local state
RULES
)

violations=0
while IFS= read -r -d '' file; do
  while IFS=$'\t' read -r pattern why; do
    while IFS= read -r hit; do
      [[ -z "$hit" ]] && continue
      echo "check_layers: ${file}:${hit%%:*}: ${why}"
      violations=$((violations + 1))
    done < <(grep -nE "$pattern" "$file" | grep -vE '^[0-9]+:[[:space:]]*//' || true)
  done <<< "$rules"
done < <(find "$core_dir" -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)

if [[ $violations -gt 0 ]]; then
  echo "check_layers: $violations violation(s) in $core_dir" >&2
  exit 1
fi
echo "check_layers: $core_dir is clean"
