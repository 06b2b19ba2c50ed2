#pragma once
// One replay of the ledger's decisions for several checkers.
//
// Four checkers judge against page_ownership's replay (use_after_free, misuse, ledger_audit,
// leak). Alone, each keeps and feeds its own; in a checker_set they read one replay, kept by
// the set and fed by a page_ownership_feed that the set attaches after every checker. The
// feed's place is what makes sharing exact:
// - ledger_audit judges a ledger decision against the history before it (a lease that ends
//   must not have been quarantined), so the replay may take an event only after the
//   checkers have seen it;
// - every other read (a page copy, a careless call, an audit, quiescence) happens at an event
//   the replay does not take, by when every earlier event has been replayed.
// So each checker sees the same view at every read as its own replay would give it, and a run
// replays each ledger decision once instead of four times (the four replays were a tenth of a
// page42 run's time and of its allocations).
#include <cstddef>
#include <optional>

#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

// A checker's replay: its own (the default), or a shared one that someone else feeds.
class ownership_source {
 public:
  ownership_source() = default;
  explicit ownership_source(const page_ownership& shared) : shared_(&shared) {}
  ownership_source(const ownership_source&) = delete;
  ownership_source& operator=(const ownership_source&) = delete;

  // Replays `e` into the checker's own replay; a shared one is fed by its page_ownership_feed.
  void observe(const sim::sim_event& e, std::size_t index) {
    if (shared_ == nullptr) own_.observe(e, index);
  }
  bool shared() const { return shared_ != nullptr; }
  const page_ownership& view() const { return shared_ != nullptr ? *shared_ : own_; }

 private:
  page_ownership own_;
  const page_ownership* shared_ = nullptr;
};

// Feeds a shared replay. Attach it after every checker that reads the replay.
class page_ownership_feed : public sim::checker {
 public:
  explicit page_ownership_feed(page_ownership& replay) : replay_(replay) {}

  const char* name() const override { return "page_ownership_feed"; }
  sim::event_kinds subscriptions() const override { return page_ownership::kinds(); }
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override {
    replay_.observe(e, index);
    return std::nullopt;
  }

 private:
  page_ownership& replay_;
};

}  // namespace kvsim::properties
