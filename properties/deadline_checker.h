#pragma once
// DOMAIN.md I9, the deadline half: an abort with a deadline stops waiting for its drain-ACKs
// once the deadline passed.
//
// Decode may arm an abort with a deadline (SGLang's and Mooncake's transfer timeouts): a
// prefill rank whose ACK never comes (a hung transport, a lost peer not yet noticed) must not
// hold the request forever. decode_receiver::check_deadlines() promises that, when it
// returns at time t, no abort of its rank armed with a deadline at or before t still waits:
// each has expired (deadline_expired: quarantined, or released in B12's world) or finished
// before. So at each sim::deadlines_checked of rank d (the world records the call, at the
// clock the call read), an abort_armed of request k on d with deadline_us <= t and neither a
// deadline_expired nor a request_finished of k on d since fires. Evidence: the arming and the
// check.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "core/events.h"
#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class deadline_checker : public sim::checker {
 public:
  const char* name() const override { return "deadline"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  struct pending {
    std::uint64_t deadline_us = 0;
    event_mark armed;
  };
  // (decode rank, request) -> its abort's deadline, while it waits.
  std::map<std::pair<core::rank_id, core::room_key>, pending> waiting_;
};

}  // namespace kvsim::properties
