#include "scenarios/transfer_admission.h"

#include <algorithm>

namespace kvsim::scenarios {

std::optional<std::uint64_t> arrival_us(const request_spec& r) {
  return r.pin && r.pin->submit_at_us ? r.pin->submit_at_us : r.arrive_at_us;
}

std::vector<std::size_t> every_request(const scenario_spec& spec) {
  std::vector<std::size_t> order(spec.requests.size());
  for (std::size_t r = 0; r < order.size(); ++r) order[r] = r;
  return order;
}

rank_batch::admission admission_of(const scenario_spec& spec, std::size_t r) {
  rank_batch::admission rule{arrival_us(spec.requests[r]), {}};
  if (spec.requests[r].after) rule.after.push_back(*spec.requests[r].after);
  for (std::size_t earlier = r; earlier-- > 0;) {
    if (spec.requests[earlier].room != spec.requests[r].room) continue;
    rule.after.push_back(earlier);
    break;
  }
  return rule;
}

rank_batch::admission prefill_admission(const scenario_spec& spec, std::size_t r) {
  rank_batch::admission rule = admission_of(spec, r);
  rule.takes_pages_in_turn = spec.requests[r].abort != abort_phase::before_admission;
  return rule;
}

rank_batch::admission decode_admission(const scenario_spec& spec, std::size_t r) {
  rank_batch::admission rule = admission_of(spec, r);
  const auto& pin = spec.requests[r].pin;
  rule.takes_pages_in_turn = !(pin && !pin->decode_pages.empty());
  return rule;
}

bool aborted_by_decode_rank(const request_spec& req, std::uint32_t decode_index) {
  if (!req.abort || req.origin != abort_origin::decode) return false;
  if (req.abort_from.empty()) return true;
  return std::find(req.abort_from.begin(), req.abort_from.end(), decode_index) !=
         req.abort_from.end();
}

bool gated(const scenario_spec& spec, std::size_t r) {
  return std::any_of(spec.faults.gates.begin(), spec.faults.gates.end(),
                     [&](const auto& g) { return g.request == r; });
}

}  // namespace kvsim::scenarios
