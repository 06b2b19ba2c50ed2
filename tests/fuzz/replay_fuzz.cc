// Fuzz target `replay`: what `kvsim replay FILE` does with any bytes: load the trace, parse
// its inline scenario with the catalogue's rules (and size caps), build the world and replay
// the decisions strictly. Loading must fail with one bounded line or succeed; a replay that
// does not fit the world is a divergence the report carries, never a crash. Bounded: at most
// 20,000 steps per input (a trace may ask for up to scenarios::caps::step_limit_max).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "tests/fuzz/fuzz_checks.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/trace_input.h"

namespace {

constexpr std::uint64_t fuzz_step_limit = 20'000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvsim;
  tools::loaded_trace loaded;
  try {
    loaded = tools::load_trace_file(fuzz::scratch_file({data, size}));
  } catch (const tools::input_error& e) {
    fuzz::require_one_line(e.what());
    return 0;
  } catch (const tools::usage_error& e) {
    fuzz::require_one_line(e.what());
    return 0;
  }
  loaded.spec.step_limit = std::min(loaded.spec.step_limit, fuzz_step_limit);
  (void)tools::replay_strictly(loaded);
  return 0;
}
