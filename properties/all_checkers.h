#pragma once
// Every checker of properties/, owned together, so that a scenario runner attaches them all
// in one line:
//
//   properties::checker_set checkers(liveness_from_us(world.faults()), spec.heal_bound_us);
//   checkers.attach(world);
//
// attach() registers them in invariant order (I1, I2, I3, I4, I6, I7), then I9 before I8:
// when one event breaks several invariants, the first names the run's finding, and at
// quiescence an unfinished request (I9) is the cause of the pages it still holds (I8). The world keeps
// pointers to them, so a set neither copies nor moves; it must outlive the world's run().
#include <cstdint>
#include <optional>
#include <string_view>

#include "properties/abort_authority_checker.h"
#include "properties/ack_after_drain_checker.h"
#include "properties/closed_room_checker.h"
#include "properties/data_integrity_checker.h"
#include "properties/deadline_checker.h"
#include "properties/host_page_checker.h"
#include "properties/ignored_call_checker.h"
#include "properties/leak_checker.h"
#include "properties/ledger_audit_checker.h"
#include "properties/liveness_checker.h"
#include "properties/misuse_checker.h"
#include "properties/outcome_checker.h"
#include "properties/outcome_report_checker.h"
#include "properties/prefetch_books_checker.h"
#include "properties/prefetch_leak_checker.h"
#include "properties/release_after_acks_checker.h"
#include "properties/room_books_checker.h"
#include "properties/shared_page_ownership.h"
#include "properties/status_books_checker.h"
#include "properties/use_after_free_checker.h"
#include "sim/world.h"

namespace kvsim::properties {

// Which checkers a run attaches. Rule checkers say the protocol was broken at a step (I2 an
// ACK before the drain, I3 a release before every ACK, I4 a closed room admitting or a
// Failed status left). Damage checkers see the consequence: I1 a transfer touching a page it
// no longer owns (and ledger misuse), I6 host pages freed twice or written while free or
// held by another request, I7 a request reading another's bytes, I8 anything left held at
// quiescence (pages, leases, prefetch entries, locks, host pages; or a ledger whose own books
// disagree with its events then), I9 a request that never
// finishes. The world's own findings (I5 deadlock, livelock at the step limit) are damage
// and always on. A bug shown by `damage` alone is shown by what it does, not by a rule.
enum class checker_family : std::uint8_t { all, damage, rules };

const char* to_string(checker_family family);
std::optional<checker_family> checker_family_from_string(std::string_view name);

struct checker_set {
  // The liveness bound (I9): faults stop at `heal_from_us`; every request then finishes
  // within `bound_us`.
  checker_set(std::uint64_t heal_from_us, std::uint64_t bound_us)
      : liveness(heal_from_us, bound_us) {}
  checker_set(const checker_set&) = delete;
  checker_set& operator=(const checker_set&) = delete;

  void attach(sim::world& w, checker_family family = checker_family::all);

  // One replay of the ledger for the checkers that judge against it, fed after all of them
  // (shared_page_ownership.h). Attach the set with attach(): a checker of the set attached
  // alone reads a replay nobody feeds.
  page_ownership ledger_replay;
  page_ownership_feed ledger_replay_feed{ledger_replay};

  use_after_free_checker use_after_free{ledger_replay};  // I1 (and ledger misuse)
  ack_after_drain_checker ack_after_drain;        // I2
  abort_authority_checker abort_authority;        // I2: an ACK target needs a real token
  release_after_acks_checker release_after_acks;  // I3
  closed_room_checker closed_room;                // I4
  outcome_report_checker outcome_reports;         // I4, I9: what prefill tells decode
  misuse_checker misuse{ledger_replay};           // the ledger refuses a careless caller
  ignored_call_checker ignored_calls;             // the engine-facing core ignores one too
  status_books_checker status_books;              // I4: the status table's answers
  room_books_checker room_books;                  // I4: the room table's reports and evictions
  prefetch_books_checker prefetch_books;          // I6: the HiCache coordinator's reports
  host_page_checker host_pages;                   // I6
  data_integrity_checker data_integrity;          // I7
  leak_checker leak{ledger_replay};               // I8
  ledger_audit_checker ledger_audit{ledger_replay};  // I8: the ledger's books at quiescence
  prefetch_leak_checker prefetch_leak;            // I8: prefetch entries, locks, host pages
  liveness_checker liveness;                      // I9
  outcome_checker outcome;                        // I9: a failure needs a cause
  deadline_checker deadlines;                     // I9: a passed deadline stops the wait
};

}  // namespace kvsim::properties
