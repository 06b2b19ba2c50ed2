#pragma once
// glibc's per-thread cache of freed blocks (tcache) keeps 7 blocks per size class by default.
// A search builds and tears down a world per seed: thousands of small blocks of the same few
// sizes, freed and asked for again within microseconds. With 7 per class most of them fall
// through to the locked bins (and their consolidation): a fifth of a page42 search was
// malloc/free. With 64 per class a page42 world's blocks stay in the cache; a world with 32
// decode ranks frees a few thousand blocks of one class at its end, so the cache holds up to
// 4096 per class: 32-rank runs then take 15% less time and page42 the same
// (docs/performance.md has the figures). The cache holds only blocks that were freed, so
// memory is what the largest world needs, as before.
//
// glibc reads that setting (the GLIBC_TUNABLES variable) only when a process starts, and
// offers no mallopt() for it, so kvsim sets the variable and executes itself again, once,
// before doing anything else. The tuning changes where memory comes from, never what a run
// decides: traces are byte-identical either way (tests/tools/allocator_tuning_test.sh).
//
// Not done when: the caller already set glibc.malloc.tcache_count (theirs wins), the variable
// KVSIM_ALLOCATOR_TUNING is set (to anything: "off" opts out; kvsim itself sets it to "done"
// before the second start), the build replaces malloc (the sanitizers), or the C library is
// not glibc. A failed exec leaves the process as it was and it goes on untuned.
#include <string>

namespace kvsim::tools {

inline constexpr const char* allocator_tuning_variable = "KVSIM_ALLOCATOR_TUNING";
inline constexpr const char* allocator_tunable = "glibc.malloc.tcache_count=4096";

// Call first thing in main(). Returns only if the process is not started again.
void tune_allocator_or_restart(char** argv);

// False where the tuning never applies (not glibc, or malloc replaced by a sanitizer).
bool allocator_tuning_possible();

// The tcache_count this process started with ("glibc.malloc.tcache_count=4096" with kvsim's
// tuning, or the caller's own), else "allocator defaults": reports say how they were measured.
std::string allocator_tuning_in_effect();

}  // namespace kvsim::tools
