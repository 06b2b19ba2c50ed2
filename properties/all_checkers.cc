#include "properties/all_checkers.h"

namespace kvsim::properties {

const char* to_string(checker_family family) {
  switch (family) {
    case checker_family::all:
      return "all";
    case checker_family::damage:
      return "damage";
    case checker_family::rules:
      return "rules";
  }
  return "all";
}

std::optional<checker_family> checker_family_from_string(std::string_view name) {
  for (checker_family f : {checker_family::all, checker_family::damage, checker_family::rules}) {
    if (name == to_string(f)) return f;
  }
  return std::nullopt;
}

void checker_set::attach(sim::world& w, checker_family family) {
  const bool damage = family != checker_family::rules;
  const bool rules = family != checker_family::damage;
  if (damage) w.add_checker(use_after_free);
  if (rules) {
    w.add_checker(ack_after_drain);
    w.add_checker(abort_authority);
    w.add_checker(release_after_acks);
    w.add_checker(closed_room);
    w.add_checker(outcome_reports);
    w.add_checker(status_books);
    w.add_checker(room_books);
    w.add_checker(prefetch_books);
    w.add_checker(misuse);
    w.add_checker(ignored_calls);
    w.add_checker(deadlines);
  }
  if (damage) {
    w.add_checker(host_pages);
    w.add_checker(data_integrity);
    w.add_checker(ledger_audit);
    // I9 before I8: a request that never finished is the cause, the pages it still holds (which
    // the leak checker would report at the same quiescence) are the consequence.
    w.add_checker(liveness);
    w.add_checker(outcome);
    w.add_checker(leak);
    w.add_checker(prefetch_leak);
  }
  // Last: the shared replay takes an event after every checker has judged it.
  w.add_checker(ledger_replay_feed);
}

}  // namespace kvsim::properties
