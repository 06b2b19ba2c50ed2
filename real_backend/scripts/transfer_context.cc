#include "real_backend/scripts/transfer_context.h"

#include <map>

namespace kvsim::real {

transfer_context::transfer_context(const scenarios::scenario_spec& scenario, core::variant v,
                                   data_plane& plane, const std::optional<run_secret>& run_key)
    : spec(scenario),
      variant(v),
      secret(run_key ? *run_key : draw_run_secret()),
      board(script_board::over(
          plane.shared_words("transfer", board_bytes(scenario.topology.pages_per_rank)),
          scenario.topology.pages_per_rank)),
      plane_text(plane.name() == "cuda" ? "the device" : "host memory"),
      watch(findings, copies, decode_rank),
      decode_owners(decode_rank, board.owners),
      wire(board.head != nullptr ? &board.head->in_flight : nullptr),
      prefill_pages(
          plane.make_pages(0, scenario.topology.pages_per_rank, scenario.topology.page_bytes)),
      decode_memory(
          plane.make_pages(1, scenario.topology.pages_per_rank, scenario.topology.page_bytes)),
      decode_pages(*decode_memory) {
  if (board.head != nullptr) findings.stamp_from(&board.head->stamps);
  std::map<core::room_id, core::generation_t> generations;
  for (const scenarios::request_spec& r : spec.requests)
    keys.push_back({r.room, generations[r.room]++});
  for (std::size_t g = 0; g < spec.faults.gates.size(); ++g) gates.push_back(plane.make_gate());
  log.observe([this](const core::event& e) {
    watch.observe(e);
    decode_owners.observe(e);
  });
  recording.attach(log);
}

}  // namespace kvsim::real
