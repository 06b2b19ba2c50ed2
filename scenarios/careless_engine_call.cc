#include "scenarios/careless_engine_call.h"

#include <array>

#include "scenarios/careless_call.h"

namespace kvsim::scenarios {

std::optional<sim::ignored_call_attempted> ignored_receiver_call(
    const core::decode_receiver& receiver, core::rank_id rank, sim::ignored_call call,
    const std::vector<core::room_key>& requests, std::size_t start, core::room_key stranger) {
  const auto not_transferring = [&](core::room_key key) {
    return receiver.finished(key) || receiver.aborting(key) || receiver.quarantined(key);
  };
  const core::room_key key = first_room_where(requests, start, stranger, not_transferring);
  if (call == sim::ignored_call::decode_prealloc && key == stranger) return std::nullopt;
  return sim::ignored_call_attempted{rank, call, key};
}

bool make_ignored_call(core::decode_receiver& receiver, const sim::ignored_call_attempted& call) {
  switch (call.call) {
    case sim::ignored_call::decode_abort:
      receiver.abort(call.key, std::nullopt);
      return false;  // abort answers nothing: what it decided is the checkers' business
    case sim::ignored_call::decode_complete:
      receiver.complete(call.key);
      return false;
    case sim::ignored_call::decode_prealloc:
      // A registered request: one page, no ranks; refused before either is looked at.
      return receiver.prealloc(call.key, 1, {}).has_value();
    default:
      return false;
  }
}

std::optional<sim::ignored_call_attempted> ignored_sender_call(const core::room_lifetimes& table,
                                                core::rank_id rank, sim::ignored_call call,
                                                const std::vector<core::room_key>& rooms,
                                                std::size_t start, core::room_key stranger) {
  switch (call) {
    case sim::ignored_call::send_chunk_unknown_room:
    case sim::ignored_call::fail_unknown_room:
      return sim::ignored_call_attempted{rank, call, stranger};
    case sim::ignored_call::send_chunk_closed_room:
      return sim::ignored_call_attempted{
          rank, call, first_room_where(rooms, start, stranger, [&](core::room_key key) {
            return table.is_tracked(key) && table.is_closed(key);
          })};
    default: {
      const core::room_key key = first_room_where(
          rooms, start, stranger, [&](core::room_key room) { return table.is_admitting(room); });
      if (call == sim::ignored_call::open_open_room && key == stranger) return std::nullopt;
      return sim::ignored_call_attempted{rank, call, key};
    }
  }
}

bool make_ignored_call(core::prefill_sender& sender, const sim::ignored_call_attempted& call,
                       core::rank_id decode_rank) {
  // Page 0 stands for any page: each call is refused before a page is looked at.
  const std::array<core::page_index, 1> one{0};
  const std::array<core::page_index, 2> two{0, 1};
  switch (call.call) {
    case sim::ignored_call::send_chunk_mismatched_pages:
      return sender.send_chunk(call.key, decode_rank, one, two, 1);
    case sim::ignored_call::send_chunk_no_siblings:
      return sender.send_chunk(call.key, decode_rank, one, one, 0);
    case sim::ignored_call::send_chunk_unknown_room:
    case sim::ignored_call::send_chunk_closed_room:
      return sender.send_chunk(call.key, decode_rank, one, one, 1);
    case sim::ignored_call::open_open_room: {
      // An engine that opens a request twice; decode waits for it, so a core that took the
      // second open for a new request would tell decode it is over.
      const std::array<core::rank_id, 1> waiting{decode_rank};
      return sender.open(call.key, one, waiting);
    }
    case sim::ignored_call::fail_unknown_room:
      sender.fail(call.key);
      return false;  // fail answers nothing: what it decided is the checkers' business
    default:
      return false;
  }
}

}  // namespace kvsim::scenarios
