#pragma once
// `kvsim real --data-plane host --ranks 2`: a transfer scenario with prefill and decode as
// separate OS processes on loopback. This process (the parent) makes the shared data plane
// (a memfd both ranks map: decode's pages are written by prefill's copy workers, gates are
// words in it), draws a fresh run key, reserves a loopback port, and starts itself twice
// (fork + exec of /proc/self/exe with its own arguments) with RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, KVSIM_RUN_KEY and the two inherited fds (rank_process.h). It runs the
// script, handing each step to the process of the rank that takes it over a socketpair,
// then collects both ranks' findings, stops them, waits for them and merges everything into
// one report: the findings in the order they were found (a counter in the shared memory).
#include <cstddef>
#include <string>

#include "core/variant.h"
#include "real_backend/real_outcome.h"
#include "real_backend/transfer_script.h"
#include "scenarios/scenario_spec.h"

namespace kvsim::real {

// The shared memory a transfer scenario's two rank processes need: both ranks' pages, the
// gates, the script board, and room for the directory.
std::size_t transfer_region_bytes(const scenarios::scenario_spec& spec);

real_outcome run_transfer_processes(const scenarios::scenario_spec& spec, core::variant v,
                                    const std::string& variant_name,
                                    const script_options& options = {});

}  // namespace kvsim::real
