#!/usr/bin/env bash
# tools/check_install.sh BUILD_DIR [CMAKE_ARG...]
#
# Proves that the core is usable from outside the tree: installs BUILD_DIR's core into a fresh
# temporary prefix (cmake --install), copies examples/abort_example out of the source tree,
# configures it against that prefix alone (find_package(kvsim), kvsim::core), builds it and
# runs it. Proves too that the installed core carries no historical bug (core/variant.h): its
# library defines none of the bugs' vocabulary (the same look at the harness's build of the
# core, which has them, must find it: the check can fire), and tools/install_probe, built
# against the prefix alone, finds has() a constant false and no bug variant to make. CMAKE_ARGs go to the example's configure. Exit 0 and one "ok" line when it all
# worked; otherwise the tail of the failing step's log, then one line saying which step failed,
# and exit 1 (2 for a usage error). The temporary directory is removed either way.
#
# The example is built with BUILD_DIR's compiler, build type and compiler launcher (ccache when
# BUILD_DIR has none and ccache is installed); when BUILD_DIR is a sanitizer build
# (KVSIM_SANITIZE, the asan preset) the installed library needs the sanitizer runtime, so the
# example is compiled and linked with the same -fsanitize flags.
#
# Under ctest: install.example_builds_against_installed_package (tools/CMakeLists.txt).
set -euo pipefail

die() { echo "check_install: $*" >&2; exit 1; }
usage_error() { echo "check_install: $*" >&2; exit 2; }
[[ $# -ge 1 && -n "$1" ]] || usage_error "usage: tools/check_install.sh BUILD_DIR [CMAKE_ARG...]"
[[ -f "$1/CMakeCache.txt" ]] ||
  usage_error "$1 is not a configured build directory (no CMakeCache.txt)"
build="$(cd "$1" && pwd)"
shift
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
started=$SECONDS

cache_value() { sed -n "s/^$1:[A-Za-z]*=//p" "$build/CMakeCache.txt" | head -n 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/kvsim-check-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
log="$tmp/step.log"

# Runs one step with its output in $log; on failure shows the log's tail and names the step.
step() {
  local what="$1"
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "--- last lines of: $* ---" >&2
    tail -n 40 "$log" >&2
    die "$what failed"
  fi
}

# 1. The libraries must be current: cmake --install copies what is built, it builds nothing.
# (kvsim_core, the harness's build with the bugs, is what the check of step 2 must fire on.)
step "building kvsim_core_shipped and kvsim_core in $build" \
  cmake --build "$build" --target kvsim_core_shipped kvsim_core --parallel 2

# 2. Install into the fresh prefix, and check that it holds the core and nothing else.
step "cmake --install $build" cmake --install "$build" --prefix "$prefix"
[[ -f "$prefix/include/kvsim/core/prefill_sender.h" ]] ||
  die "the install has no include/kvsim/core/prefill_sender.h"
[[ -n "$(find "$prefix" -name 'kvsimConfig.cmake' -print -quit)" ]] ||
  die "the install has no kvsimConfig.cmake"
extra="$(cd "$prefix/include/kvsim" && find . -mindepth 1 -maxdepth 1 ! -name core | head -n 1)"
[[ -z "$extra" ]] || die "the install holds more than the core: include/kvsim/${extra#./}"

# 2b. No historical bug's vocabulary in the installed library; the harness's has it.
bug_vocabulary() {
  nm -C --defined-only "$1" 2>/dev/null |
    grep -E 'kvsim::core::(to_string|describe)\(kvsim::core::bug\)|kvsim::core::bug_from_string\(' || true
}
installed_library="$(find "$prefix" -name 'libkvsim_core*.a' -print -quit)"
[[ -n "$installed_library" ]] || die "the install has no libkvsim_core*.a"
[[ -n "$(bug_vocabulary "$build/lib/libkvsim_core.a")" ]] ||
  die "the check for historical bugs finds none in the harness's core ($build/lib/libkvsim_core.a), which has them: the check cannot fire"
found_bugs="$(bug_vocabulary "$installed_library")"
[[ -z "$found_bugs" ]] ||
  die "the installed core carries historical bugs: $(head -n 1 <<< "$found_bugs")"

# 3. Configure the example as an outside project: its own copy of the sources, its own build
# directory, the prefix as the only place to find kvsim.
cp -R "$source_dir/examples/abort_example" "$tmp/abort_example"
cp -R "$source_dir/tools/install_probe" "$tmp/install_probe"
args=(-DCMAKE_PREFIX_PATH="$prefix"
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
      -DCMAKE_CXX_COMPILER="$(cache_value CMAKE_CXX_COMPILER)")
generator="$(cache_value CMAKE_GENERATOR)"
[[ -z "$generator" ]] || args+=(-G "$generator")
build_type="$(cache_value CMAKE_BUILD_TYPE)"
[[ -z "$build_type" ]] || args+=(-DCMAKE_BUILD_TYPE="$build_type")
launcher="$(cache_value CMAKE_CXX_COMPILER_LAUNCHER)"
if [[ -z "$launcher" ]] && command -v ccache >/dev/null; then launcher=ccache; fi
if [[ -n "$launcher" ]]; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
  # The temporary paths differ on every run; relative to this base, ccache still hits.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$tmp}"
fi
if [[ "$(cache_value KVSIM_SANITIZE)" =~ ^(ON|1|TRUE|YES|Y|on|true|yes)$ ]]; then
  # The flags of the top CMakeLists.txt's KVSIM_SANITIZE block.
  args+=("-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
         "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
fi
step "configuring examples/abort_example against the installed package" \
  cmake -S "$tmp/abort_example" -B "$tmp/build" "${args[@]}" "$@"
found="$(sed -n 's/^kvsim_DIR:[A-Za-z]*=//p' "$tmp/build/CMakeCache.txt")"
[[ "$found" == "$prefix"/* ]] ||
  die "find_package(kvsim) found '$found', not the fresh install under $prefix"

# 4. Build it, and check that it compiled against the installed headers, not the source tree.
step "building examples/abort_example" cmake --build "$tmp/build" --parallel 2
depfile="$(find "$tmp/build" -name 'main.cc.o.d' -print -quit)"
if [[ -n "$depfile" ]]; then
  # (Relative to the temporary directory where ccache rewrote the paths.)
  grep -qF "include/kvsim/core/prefill_sender.h" "$depfile" ||
    die "the example did not include the installed headers ($depfile names none)"
  ! grep -qF "$source_dir/core/" "$depfile" ||
    die "the example included headers from the source tree ($source_dir/core)"
fi

# 5. Run it: it drives an abort through prefill and decode and checks the outcome itself.
step "running abort_example (its checks failed)" "$tmp/build/abort_example"

# 6. The probe, built the same way: it does not compile where has() is not a constant false,
# and fails where a bug can be asked for by name.
step "configuring tools/install_probe against the installed package" \
  cmake -S "$tmp/install_probe" -B "$tmp/probe_build" "${args[@]}" "$@"
step "building tools/install_probe (the installed core has historical bugs)" \
  cmake --build "$tmp/probe_build" --parallel 2
step "running no_historical_bugs (the installed core makes a bug variant)" \
  "$tmp/probe_build/no_historical_bugs"

echo "check_install: ok: installed the core (no historical bug in it), built and ran" \
  "examples/abort_example and tools/install_probe against it ($((SECONDS - started)) s)"
