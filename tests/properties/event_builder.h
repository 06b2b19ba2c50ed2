#pragma once
// Hand-built event logs for the checker tests. Each event is stamped with a step: one past the
// previous event's by default, or the step set by at(), so a test can write the steps its
// expected message names. The builder is also a core::event_sink, so a real core::page_ledger
// can write its own decisions into the log (stamped the same way).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "core/events.h"
#include "core/ids.h"
#include "core/ports.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::sim {

// Readable findings in GoogleTest failures (found by argument-dependent lookup).
inline void PrintTo(const finding& f, std::ostream* out) {
  *out << "{" << f.invariant << ": \"" << f.message << "\", evidence [";
  for (std::size_t i = 0; i < f.evidence.size(); ++i) *out << (i ? "," : "") << f.evidence[i];
  *out << "], details [";
  for (std::size_t i = 0; i < f.details.size(); ++i) *out << (i ? " | " : "") << f.details[i];
  *out << "]}";
}

}  // namespace kvsim::sim

namespace kvsim::testing {

class event_builder : public core::event_sink {
 public:
  // The next event gets `step`; later ones count up from there.
  event_builder& at(std::uint64_t step) {
    next_step_ = step;
    return *this;
  }

  // Appends one event and returns its index in the log.
  std::size_t add(sim::sim_event_body body) {
    events_.push_back(sim::sim_event{next_step_, next_step_ * 10, sim::no_actor, std::move(body)});
    ++next_step_;
    return events_.size() - 1;
  }
  std::size_t decided(core::rank_id rank, core::event_body body) {
    return add(sim::core_decided{core::event{rank, std::move(body)}});
  }
  void emit(const core::event& e) override { add(sim::core_decided{e}); }

  // The ledger's decisions, by hand.
  std::size_t allocated(core::rank_id rank, core::room_key owner,
                        std::vector<core::page_index> pages) {
    return decided(rank, core::pages_allocated{owner, std::move(pages)});
  }
  std::size_t lease_started(core::rank_id rank, core::lease_id lease, core::room_key owner,
                            core::lease_role role, std::vector<core::page_index> pages) {
    return decided(rank, core::lease_started{lease, owner, role, std::move(pages)});
  }
  std::size_t lease_ended(core::rank_id rank, core::lease_id lease, core::room_key owner,
                          std::vector<core::page_index> pages) {
    return decided(rank, core::lease_ended{lease, owner, std::move(pages)});
  }
  std::size_t lease_quarantined(core::rank_id rank, core::lease_id lease, core::room_key owner,
                                std::vector<core::page_index> pages) {
    return decided(rank, core::lease_quarantined{lease, owner, std::move(pages)});
  }
  std::size_t quarantine_confirmed(core::rank_id rank, core::lease_id lease, core::room_key owner,
                                   std::vector<core::page_index> pages) {
    return decided(rank, core::quarantine_confirmed{lease, owner, std::move(pages)});
  }
  std::size_t release_requested(core::rank_id rank, core::room_key owner,
                                std::vector<core::page_index> freed_now,
                                std::vector<core::page_index> deferred) {
    return decided(rank, core::release_requested{owner, std::move(freed_now), std::move(deferred)});
  }
  std::size_t freed(core::rank_id rank, core::room_key owner, core::page_index page) {
    return decided(rank, core::page_freed{owner, page});
  }

  // One page of a transfer copied: source read, destination written.
  std::size_t copied(sim::transfer_id transfer, core::room_key owner, core::rank_id source_rank,
                     core::page_index source_page, core::rank_id destination_rank,
                     core::page_index destination_page) {
    return add(sim::transfer_page_copied{transfer, owner, source_rank, source_page,
                                         destination_rank, destination_page});
  }

  const std::vector<sim::sim_event>& events() const { return events_; }
  std::uint64_t next_step() const { return next_step_; }

 private:
  std::vector<sim::sim_event> events_;
  std::uint64_t next_step_ = 1;
};

// Feeds the log to the checker in order, as the world does: the first finding ends the run.
inline std::optional<sim::finding> observe_all(sim::checker& checker,
                                               const std::vector<sim::sim_event>& events) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (auto found = checker.observe(events[i], i)) return found;
  }
  return std::nullopt;
}

// observe_all, then, when nothing fired, the quiescence check.
inline std::optional<sim::finding> run_to_quiescence(sim::checker& checker,
                                                     const std::vector<sim::sim_event>& events) {
  if (auto found = observe_all(checker, events)) return found;
  return checker.at_quiescence();
}

}  // namespace kvsim::testing
