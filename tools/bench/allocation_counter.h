#pragma once
// Heap allocations made by this thread through operator new, counted by kvsim_bench's own
// replacement of the global operator new (allocation_counter.cc): a benchmark reads it before
// and after its loop and reports allocations per run, the figure behind most of what a run
// costs beyond its decisions (docs/performance.md). Only kvsim_bench links it.
#include <cstdint>

namespace kvsim::bench {

std::uint64_t allocations_so_far();

}  // namespace kvsim::bench
