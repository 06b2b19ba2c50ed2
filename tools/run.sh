#!/usr/bin/env bash
# kvsim's one entry point: installs what is missing, configures, builds, and runs.
#   tools/run.sh demo  [--preset P]   build, then run the main job (kvsim demo)
#   tools/run.sh test  [--preset P]   build, then run the whole test suite with ctest
#   tools/run.sh build [--preset P]   build only
#   tools/run.sh deps                 install what is missing, nothing else
# Presets (CMakePresets.json): default (Release with assertions), debug, asan, tsan (the real
# backend's CPU tests only, under ThreadSanitizer).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

die() { echo "run.sh: $*" >&2; exit 2; }

# Debian packages kvsim builds with. Checked one by one so a machine that has them all
# prints nothing and touches nothing.
packages=(
  cmake g++ make pkg-config
  libboost-dev libboost-fiber-dev libboost-context-dev libboost-program-options-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  nlohmann-json3-dev libsodium-dev
  python3 ccache
)

install_missing() {
  local missing=()
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$package")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || die "missing packages (${missing[*]}) and not root to install them"
    sudo=(sudo)
  fi
  echo "run.sh: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

build_dir_of() {
  case "$1" in
    default) echo build ;;
    debug) echo build-debug ;;
    asan) echo build-asan ;;
    tsan) echo build-tsan ;;
    *) die "unknown preset '$1' (default, debug, asan, tsan)" ;;
  esac
}

configure_and_build() {
  local preset="$1"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" --parallel "$(nproc)"
}

command="${1:-}"
[[ -n "$command" ]] || die "usage: tools/run.sh demo|test|build|deps [--preset default|debug|asan|tsan]"
shift
preset=default
while [[ $# -gt 0 ]]; do
  case "$1" in
    --preset) [[ $# -ge 2 ]] || die "--preset needs a value"; preset="$2"; shift 2 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
build_dir="$(build_dir_of "$preset")"

case "$command" in
  build)
    install_missing
    configure_and_build "$preset"
    ;;
  test)
    install_missing
    configure_and_build "$preset"
    ctest --preset "$preset" --parallel "$(nproc)"
    ;;
  demo)
    install_missing
    configure_and_build "$preset"
    "$build_dir/bin/kvsim" demo
    ;;
  deps)
    install_missing
    ;;
  *)
    die "unknown command '$command' (demo, test, build, deps)"
    ;;
esac
