// Fuzz target `trace`: the trace loader (sim/trace.h) on any bytes. It must return a trace or
// throw trace_error with one bounded line: no crash, no other exception, no std::bad_alloc.
#include <cstddef>
#include <cstdint>
#include <span>

#include "sim/trace.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvsim;
  try {
    const sim::trace t = sim::load_trace(fuzz::scratch_file({data, size}));
    (void)sim::to_json(t);  // what write_trace renders: must take whatever load accepted
  } catch (const sim::trace_error& e) {
    fuzz::require_one_line(e.what());
  }
  return 0;
}
