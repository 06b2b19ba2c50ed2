#pragma once
// When a transfer world's rank may start each request, when it serves many at once
// (topology.concurrency > 1): arrival, the requests it waits for, and whether it takes its
// pages in the rank's queue (scenarios/rank_batch.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "scenarios/rank_batch.h"
#include "spec/scenario_spec.h"

namespace kvsim::scenarios {

// When a request arrives: its pinned submission, or its arrival (requests[i].arrive_at_us);
// empty: at the start.
std::optional<std::uint64_t> arrival_us(const request_spec& r);

// Every request of the scenario, in arrival (index) order.
std::vector<std::size_t> every_request(const scenario_spec& spec);

// A request starts once it arrived, after the request it names in `after`, and after the
// previous generation of its room ended on the rank: an engine never holds two live requests
// of one id (vLLM refuses a duplicate request id; SGLang's bootstrap rooms are unique), so a
// room's generations open in order, as the core's tombstones assume.
rank_batch::admission admission_of(const scenario_spec& spec, std::size_t r);
// On prefill: a request aborted before admission is dropped there and takes no pages.
rank_batch::admission prefill_admission(const scenario_spec& spec, std::size_t r);
// On decode: a pinned request takes its logged pages by name, outside the queue.
rank_batch::admission decode_admission(const scenario_spec& spec, std::size_t r);

// Whether the decode rank of index `decode_index` (0 for the first decode rank) aborts `req`
// (every decode rank, unless the request names them in abort_from).
bool aborted_by_decode_rank(const request_spec& req, std::uint32_t decode_index);
// Whether a scripted gate holds request r's transfer.
bool gated(const scenario_spec& spec, std::size_t r);

}  // namespace kvsim::scenarios
