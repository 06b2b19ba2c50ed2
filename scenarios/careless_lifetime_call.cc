#include "scenarios/careless_lifetime_call.h"

#include "scenarios/careless_call.h"

namespace kvsim::scenarios {
namespace {

bool makes_wrong(const core::room_lifetimes& table, sim::lifetime_call call, core::room_key key) {
  switch (call) {
    // Not a before-open tombstone: an open of one is the late sender itself, whose refusal
    // the sender ends (it forgets the ABORT that made the tombstone); the table alone cannot.
    case sim::lifetime_call::open:
      return table.is_tracked(key) || (table.is_tombstoned(key) && !table.is_tombstoned_before_open(key));
    case sim::lifetime_call::try_acquire:
      return table.is_closed(key);
    case sim::lifetime_call::release:
      return table.is_tracked(key) && table.pending_leases(key) == 0;
    case sim::lifetime_call::clear:
      return table.is_tracked(key) && table.pending_leases(key) > 0;
  }
  return false;
}

}  // namespace

sim::lifetime_misuse_attempted wrong_lifetime_call(const core::room_lifetimes& table,
                                                   core::rank_id rank, sim::lifetime_call call,
                                                   const std::vector<core::room_key>& rooms,
                                                   std::size_t start, core::room_key stranger) {
  const core::room_key key = first_room_where(
      rooms, start, stranger, [&](core::room_key room) { return makes_wrong(table, call, room); });
  if (key == stranger && call == sim::lifetime_call::open) call = sim::lifetime_call::try_acquire;
  return {rank, call, key};
}

std::optional<core::lifetime_error> make_careless_lifetime_call(
    core::room_lifetimes& table, const sim::lifetime_misuse_attempted& call) {
  const auto refusal_of =
      [](const core::status<core::lifetime_error>& outcome) -> std::optional<core::lifetime_error> {
    if (outcome) return std::nullopt;
    return outcome.error();
  };
  switch (call.call) {
    case sim::lifetime_call::open:
      return refusal_of(table.open(call.key));
    case sim::lifetime_call::try_acquire:
      return refusal_of(table.try_acquire(call.key));
    case sim::lifetime_call::release:
      return refusal_of(table.release(call.key));
    case sim::lifetime_call::clear:
      return refusal_of(table.clear(call.key));
  }
  return std::nullopt;
}

sim::room_table_read read_room_table(const core::room_lifetimes& table, core::rank_id rank,
                                     const std::vector<core::room_key>& rooms) {
  sim::room_table_read read{rank, {}};
  for (const core::room_key key : rooms) {
    read.rooms.push_back({key, table.is_tracked(key), table.is_admitting(key), table.is_closed(key),
                          table.is_tombstoned(key), table.pending_leases(key)});
  }
  return read;
}

}  // namespace kvsim::scenarios
