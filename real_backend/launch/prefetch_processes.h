#pragma once
// `kvsim real --data-plane host --ranks N` for a HiCache prefetch scenario: each rank of the
// attention group (N of them) a process of its own, with its own prefetch_abort_coordinator on
// its own owner thread (prefetch_rank.h), its host pages, storage reads and gates in its own
// host memory, and the group's collectives (all_reduce MIN/MAX of an int64, barrier) carried
// between the processes over the authenticated, sealed TCP control plane (wire_group.h), with
// the group's patience as deadline: a divergence is the I5 finding it is in one process, not a
// hang.
//
// This process (the parent) starts the ranks as the transfer scripts' parent does
// (rank_spawn.h: RANK, WORLD_SIZE, MASTER_ADDR, a fresh KVSIM_RUN_KEY, its socketpair and the
// shared words' fd) and drives each over its socketpair (step_channel.h, served_script::prefetch):
//   "listening"        (rank) its control plane listens, on the port it wrote into the words
//   "connect ID"       link to every other rank: connect to the lower ranks, accept the higher
//                      (each link authenticated with the run's key and sealed)
//   "run ID"           run its part of the script; answered once it returned, every read
//                      landed and its host pages were checked: {"barrier_entries",
//                      "host_page_frees"}
//   "findings ID", "events ID", "stop ID", "exit"   as for a transfer script's rank
// Every rank runs at once; then the parent merges their findings (in the order found: a
// counter in the shared words) and events into the one report and exit code that the run in
// one process gives.
#include <string>

#include "core/variant.h"
#include "real_backend/launch/launcher.h"
#include "real_backend/scripts/prefetch_script.h"
#include "real_backend/scripts/real_outcome.h"
#include "real_backend/scripts/transfer_script.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

// The ranks take the variant (and the scenario) from the arguments this process was started
// with, which each is started with again.
real_outcome run_prefetch_processes(const scenarios::scenario_spec& spec,
                                    const std::string& variant_name,
                                    const script_options& options = {},
                                    prefetch_counts* counts = nullptr);

// A rank process of such a run (started_as_rank_process): returns its exit status (0; 3 when
// its part failed, said on the channel and on `err`).
int run_prefetch_rank_process(const scenarios::scenario_spec& spec, core::variant v,
                              const environment& env, std::ostream& err);

}  // namespace kvsim::real
