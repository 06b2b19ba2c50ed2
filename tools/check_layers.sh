#!/usr/bin/env bash
# The purity rules of the lower layers, for what an include path cannot express (see
# CMakeLists.txt's kvsim_layer_includes for the part the compiler enforces).
#   core/ is production code: nothing from sim/ or real_backend/, no Boost, CUDA or NCCL, no
#         threads, clocks, randomness or environment (docs/DOMAIN.md, "How the repository is shaped").
#   spec/ is the contract below both backends (the vocabularies, the canary bytes): the
#         core's rules, so that the real backend can use it without the simulator.
#   sim/  is deterministic: no upper layer, no threads, no wall clocks, no std::rand or
#         <random>, no iteration over pointer-keyed containers (every run replays from its decisions alone).
#   lengths: no function body over 80 lines, no source file over 800 (tools/check_lengths.py).
# Usage:
#   tools/check_layers.sh                 check core/, spec/ and sim/ of this repository, and every
#                                         C++ source's lengths
#   tools/check_layers.sh LAYER DIR       check DIR with LAYER's rules (core, spec or sim)
# Prints one line per violation (file:line: what) and exits 1 if there is any, 2 on misuse.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# pattern<TAB>why, per layer
core_rules=$(cat <<'RULES'
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
sim_rules=$(cat <<'RULES'
#include[[:space:]]*["<](\.\./)*(scenarios|properties|tools|real_backend)/	includes an upper layer
#include[[:space:]]*[<"](cuda|cuda_runtime|cuda_runtime_api|nccl)[^>"]*[>"]	includes CUDA or NCCL
#include[[:space:]]*<(thread|mutex|shared_mutex|condition_variable|future|random|ctime)>	uses threads or randomness
std::(thread|jthread|mutex|rand|random_device|mt19937|this_thread)\b	uses threads or randomness
(steady_clock|system_clock|high_resolution_clock)::now	reads a wall clock
\b(s?rand|time|clock_gettime|gettimeofday)[[:space:]]*\(	uses wall clocks or randomness
\bthread_local\b	uses thread-local state
(map|set|unordered_map|unordered_set|multimap|multiset)<[^,<>]*\*	keys a container by pointer (iteration order varies)
RULES
)

check_dir() {
  local layer="$1" dir="$2" rules
  case "$layer" in
    core | spec) rules="$core_rules" ;;
    sim) rules="$sim_rules" ;;
    *) echo "check_layers: unknown layer '$layer' (core, spec, sim)" >&2; exit 2 ;;
  esac
  [[ -d "$dir" ]] || { echo "check_layers: no such directory: $dir" >&2; exit 2; }
  local found=0
  while IFS= read -r -d '' file; do
    while IFS=$'\t' read -r pattern why; do
      while IFS= read -r hit; do
        [[ -z "$hit" ]] && continue
        echo "check_layers: ${file}:${hit%%:*}: ${why}"
        found=$((found + 1))
      done < <(grep -nE "$pattern" "$file" | grep -vE '^[0-9]+:[[:space:]]*//' || true)
    done <<< "$rules"
  done < <(find "$dir" -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)
  violations=$((violations + found))
}

violations=0
case $# in
  0)
    check_dir core "$repo_root/core"
    check_dir spec "$repo_root/spec"
    check_dir sim "$repo_root/sim"
    # Lengths too: a function body of at most 80 lines and a file of at most 800, everywhere,
    # unless tools/length_exceptions.txt names it with its reason.
    python3 "$repo_root/tools/check_lengths.py" || violations=$((violations + 1))
    ;;
  2) check_dir "$1" "$2" ;;
  *) echo "check_layers: usage: check_layers.sh [LAYER DIR]" >&2; exit 2 ;;
esac

if [[ $violations -gt 0 ]]; then
  echo "check_layers: $violations violation(s)" >&2
  exit 1
fi
echo "check_layers: clean"
