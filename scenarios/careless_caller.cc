#include "scenarios/careless_caller.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <variant>

#include "scenarios/careless_call.h"
#include "scenarios/careless_engine_call.h"
#include "scenarios/careless_lifetime_call.h"
#include "scenarios/core_audit.h"

namespace kvsim::scenarios {
namespace {

// Tags of the caller's data decisions (sim::world::choose).
constexpr std::uint64_t choice_careless_call = 0xca11;
constexpr std::uint64_t choice_careless_page = 0xca12;
constexpr std::uint64_t choice_careless_caller = 0xca13;
constexpr std::uint64_t choice_careless_variant = 0xca14;
constexpr std::uint64_t choice_careless_table = 0xca15;

}  // namespace

core::room_key careless_caller::stranger() {
  return {std::numeric_limits<core::room_id>::max(),
          std::numeric_limits<core::generation_t>::max()};
}

void careless_caller::call_once(rank_id rank, const rank_targets& targets) {
  const std::uint32_t target = world_.choose(choice_careless_table, 3);
  if (targets.table != nullptr && target == 0) {
    misuse_table_once(rank, *targets.table);
  } else if (targets.table != nullptr && targets.sender != nullptr && target == 1) {
    ignored_sender_call_once(rank, *targets.table, *targets.sender);
  } else if (targets.receiver != nullptr && target == 0) {
    ignored_receiver_call_once(rank, *targets.receiver);
  } else if (targets.receiver != nullptr && target == 1) {
    impatient_free_once(rank, targets.ledger, *targets.receiver);
  } else {
    misuse_once(rank, targets.ledger);
  }
}

void careless_caller::misuse_once(rank_id rank, core::page_ledger& ledger) {
  const std::uint32_t total = ledger.pages_total();
  sim::misuse_attempted call{rank, sim::ledger_call::release, {}, {}, {}, 0, 0, total};
  const room_key any_caller = [&] {
    const std::uint32_t pick =
        world_.choose(choice_careless_caller, static_cast<std::uint32_t>(keys_.size()) + 1);
    return pick < keys_.size() ? keys_[pick] : stranger();
  }();
  const page_index page = total == 0 ? 0 : world_.choose(choice_careless_page, total);
  const bool as_lease = world_.choose(choice_careless_variant, 2) == 1;
  call.call = as_lease ? sim::ledger_call::lease : sim::ledger_call::release;
  call.role = as_lease && world_.choose(choice_careless_variant, 2) == 1
                  ? core::lease_role::destination
                  : core::lease_role::source;
  call.caller = any_caller;
  switch (world_.choose(choice_careless_call, 8)) {
    case 0:  // nothing asked for
      if (!as_lease && world_.choose(choice_careless_variant, 2) == 1) {
        call.call = sim::ledger_call::allocate;
        call.count = 0;
      }
      break;
    case 1: {  // past the pool's end, after a page in range: the culprit is the second
      const page_index beyond = world_.choose(choice_careless_variant, 2) == 1
                                    ? std::numeric_limits<page_index>::max()
                                    : total;
      call.pages = {page, beyond};
      break;
    }
    case 2:  // the same page twice
      call.pages = {page, page};
      break;
    case 3:  // a page under a room that owns nothing: free, or another request's
      call.caller = stranger();
      call.pages = {page};
      break;
    case 4: {  // a request's page under another request (or a free page under anyone)
      const std::optional<room_key> owner = ledger.owner_of(page);
      if (owner == call.caller) call.caller = stranger();
      call.pages = {page};
      break;
    }
    case 5: {  // a page its owner already released, still retiring behind a lease
      call.caller = stranger();
      call.pages = {page};
      for (page_index i = 0; i < total; ++i) {
        const page_index candidate = (page + i) % total;
        const std::optional<room_key> owner = ledger.owner_of(candidate);
        if (owner && ledger.is_retiring(candidate)) {
          call.caller = *owner;
          call.pages = {candidate};
          break;
        }
      }
      break;
    }
    case 6:  // a room that owns nothing releases everything it has: nothing, and no misuse
      call.call = sim::ledger_call::release_all;
      call.caller = stranger();
      break;
    default:
      careless_lease_call(rank, call);
      break;
  }
  world_.emit(call);
  world_.emit(sim::misuse_answered{rank, make_careless_call(ledger, call)});
  // A monitor reads the books right after: the audit holds them against the events mid-run.
  world_.emit(audit_ledger(rank, ledger, keys_));
}

// The engine frees a request the core gave up on (quarantined at its deadline, or holding
// its pages for a dead peer), or one it aborted (as SGLang's decode did before the drain-ACK
// fix, B1's engine side), whenever it likes: nothing a transport may still write into may be
// freed by that (the destination lease from publish on holds the pages back).
void careless_caller::impatient_free_once(rank_id rank, core::page_ledger& ledger,
                                          const core::decode_receiver& receiver) {
  follow_events();
  const std::set<room_key>& held = held_for_dead_peer_[rank];
  std::vector<room_key> given_up;
  for (const room_key& key : keys_) {
    if (receiver.finished(key)) continue;
    if (receiver.quarantined(key) || receiver.aborting(key) || held.contains(key)) {
      given_up.push_back(key);
    }
  }
  if (given_up.empty()) return;
  const room_key key =
      given_up[world_.choose(choice_careless_caller, static_cast<std::uint32_t>(given_up.size()))];
  world_.emit(sim::engine_freed{rank, key});
  (void)ledger.release_all(key);
}

void careless_caller::ignored_sender_call_once(rank_id rank, const core::room_lifetimes& table,
                                               core::prefill_sender& sender) {
  static constexpr sim::ignored_call calls[] = {
      sim::ignored_call::send_chunk_unknown_room, sim::ignored_call::send_chunk_mismatched_pages,
      sim::ignored_call::send_chunk_no_siblings, sim::ignored_call::send_chunk_closed_room,
      sim::ignored_call::open_open_room,         sim::ignored_call::fail_unknown_room};
  const sim::ignored_call call = calls[world_.choose(choice_careless_call, std::size(calls))];
  const std::size_t start =
      world_.choose(choice_careless_caller, static_cast<std::uint32_t>(keys_.size()));
  const auto attempt = ignored_sender_call(table, rank, call, keys_, start, stranger());
  if (!attempt) return;
  world_.emit(*attempt);
  world_.emit(
      sim::ignored_call_answered{rank, make_ignored_call(sender, *attempt, decode_ranks_.front())});
}

void careless_caller::ignored_receiver_call_once(rank_id rank, core::decode_receiver& receiver) {
  static constexpr sim::ignored_call calls[] = {sim::ignored_call::decode_abort,
                                                sim::ignored_call::decode_complete,
                                                sim::ignored_call::decode_prealloc};
  const sim::ignored_call call = calls[world_.choose(choice_careless_call, std::size(calls))];
  const std::size_t start =
      world_.choose(choice_careless_caller, static_cast<std::uint32_t>(keys_.size()));
  const auto attempt = ignored_receiver_call(receiver, rank, call, keys_, start, stranger());
  if (!attempt) return;
  world_.emit(*attempt);
  world_.emit(sim::ignored_call_answered{rank, make_ignored_call(receiver, *attempt)});
}

void careless_caller::misuse_table_once(rank_id rank, core::room_lifetimes& table) {
  static constexpr sim::lifetime_call calls[] = {
      sim::lifetime_call::open, sim::lifetime_call::try_acquire, sim::lifetime_call::release,
      sim::lifetime_call::clear};
  const sim::lifetime_call call = calls[world_.choose(choice_careless_call, std::size(calls))];
  const std::size_t start =
      world_.choose(choice_careless_caller, static_cast<std::uint32_t>(keys_.size()));
  const sim::lifetime_misuse_attempted attempt =
      wrong_lifetime_call(table, rank, call, keys_, start, stranger());
  world_.emit(attempt);
  world_.emit(sim::lifetime_misuse_answered{rank, make_careless_lifetime_call(table, attempt)});
  world_.emit(read_room_table(table, rank, keys_));
}

// A call naming a lease id that is wrong for it, whatever the ledger holds: never issued (0,
// the next id, the largest), already ended, or in the other quarantine state than the call
// needs. Which ids are which, the world reads from the ledger's own events (it is the
// environment: a real caller would remember the ids it was given).
void careless_caller::careless_lease_call(rank_id rank, sim::misuse_attempted& call) {
  follow_events();
  const rank_leases& known = leases_seen_[rank];
  call.caller = {};
  const auto pick_one = [&](lease_life life) -> std::optional<core::lease_id> {
    std::vector<core::lease_id> ids;
    for (const auto& [id, now] : known.lives) {
      if (now == life) ids.push_back(id);
    }
    if (ids.empty()) return std::nullopt;
    return ids[world_.choose(choice_careless_variant, static_cast<std::uint32_t>(ids.size()))];
  };
  // A call, and the life of the lease that makes it wrong.
  struct wrong_for {
    sim::ledger_call call;
    lease_life life;
  };
  static constexpr wrong_for by_life[] = {
      {sim::ledger_call::end_lease, lease_life::ended},
      {sim::ledger_call::confirm_quarantine, lease_life::live},
      {sim::ledger_call::end_lease, lease_life::quarantined},
      {sim::ledger_call::quarantine, lease_life::quarantined},
  };
  const std::uint32_t pick = world_.choose(choice_careless_variant, std::size(by_life) + 2);
  if (pick < std::size(by_life)) {
    if (const auto id = pick_one(by_life[pick].life)) {
      call.call = by_life[pick].call;
      call.lease = *id;
      return;
    }
  } else if (pick == std::size(by_life)) {
    call.call = sim::ledger_call::quarantine;
    call.lease = known.last_issued + 1;  // the next id: not issued yet
    return;
  }
  static constexpr sim::ledger_call lease_calls[] = {sim::ledger_call::end_lease,
                                                     sim::ledger_call::quarantine,
                                                     sim::ledger_call::confirm_quarantine};
  call.call = lease_calls[world_.choose(choice_careless_variant, 3)];
  call.lease = world_.choose(choice_careless_variant, 2) == 1
                   ? std::numeric_limits<core::lease_id>::max()
                   : 0;
}

// Reads the core's events emitted since the last look: lease ids into leases_seen_, pages
// held for a dead peer into held_for_dead_peer_.
void careless_caller::follow_events() {
  const std::vector<sim::sim_event>& events = world_.events();
  for (; events_seen_ < events.size(); ++events_seen_) {
    const auto* decided = std::get_if<sim::core_decided>(&events[events_seen_].body);
    if (decided == nullptr) continue;
    if (const auto* handled = std::get_if<core::peer_death_handled>(&decided->what.body)) {
      if (handled->action == core::peer_death_action::quarantined) {
        held_for_dead_peer_[decided->what.rank].insert(handled->key);
      }
    }
    rank_leases& known = leases_seen_[decided->what.rank];
    if (const auto* started = std::get_if<core::lease_started>(&decided->what.body)) {
      known.lives[started->lease] = lease_life::live;
      known.last_issued = std::max(known.last_issued, started->lease);
    } else if (const auto* held = std::get_if<core::lease_quarantined>(&decided->what.body)) {
      known.lives[held->lease] = lease_life::quarantined;
    } else if (const auto* ended = std::get_if<core::lease_ended>(&decided->what.body)) {
      known.lives[ended->lease] = lease_life::ended;
    } else if (const auto* confirmed =
                   std::get_if<core::quarantine_confirmed>(&decided->what.body)) {
      known.lives[confirmed->lease] = lease_life::ended;
    }
  }
}

}  // namespace kvsim::scenarios
