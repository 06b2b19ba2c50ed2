#pragma once
// DOMAIN.md I9: after faults stop, every request finishes (success or abort) within a bounded
// time.
//
// A request is (rank, room, generation): it starts on that rank with the first of its
// pages_allocated, room_opened or abort_armed there, and finishes with its request_finished
// there. Faults stop at `heal_from_us` (virtual time); a request must then finish by
// max(heal_from_us, its start) + `bound_us`. Any event later than that while the request
// is unfinished fires, the request_finished itself included (finishing late is not
// finishing in time); at quiescence every started, unfinished request fires ("never
// finished"). A request that finished stays finished: a later event of it does not restart
// it. A run cut short by the step limit is judged at the time it reached (a spinning run
// emits no event that would find the deadline passed). Evidence: the start of every overdue
// request and the event that found it overdue.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "properties/dense_index_map.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/fault_profile.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

// Where I9 starts counting in a run with profile `faults`: when its faults stop. A profile
// whose faults never stop (hand-built, or a trace written before the stop existed) is judged
// as such runs always were: from each request's start.
std::uint64_t liveness_from_us(const sim::fault_profile& faults);

class liveness_checker : public sim::checker {
 public:
  liveness_checker(std::uint64_t heal_from_us, std::uint64_t bound_us)
      : heal_from_us_(heal_from_us), bound_us_(bound_us) {}

  const char* name() const override { return "liveness"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;
  std::optional<sim::finding> at_quiescence() override;
  // "unfinished: room 7/gen 0 on rank 1 started at t=0us (step 3, pages_allocated), due by
  // t=10000us", in start order.
  std::vector<std::string> still_open() const override;
  // Cut short by the step limit: every request then past its due time fires, as a late event
  // would have found it.
  std::optional<sim::finding> at_step_limit(std::uint64_t step, std::uint64_t now_us) override;

  std::uint64_t heal_from_us() const { return heal_from_us_; }
  std::uint64_t bound_us() const { return bound_us_; }

 private:
  using rank_room = std::pair<core::rank_id, core::room_key>;
  using due = std::tuple<std::uint64_t, core::rank_id, core::room_key>;  // (deadline, who)

  struct request {
    event_mark started;
    std::uint64_t started_us = 0;
    const char* started_by = "";  // the event kind that started it
    std::uint64_t deadline_us = 0;
    bool finished = false;
  };

  void start(core::rank_id rank, const core::room_key& key, const char* by, event_mark at,
             std::uint64_t time_us);
  // Requests overdue at `time_us` (step `step`), found by the event at `index` if any.
  std::optional<sim::finding> check_deadlines(std::uint64_t step, std::uint64_t time_us,
                                              std::optional<std::size_t> index) const;
  std::string request_text(const rank_room& who, const request& r) const;
  void forget_rank(core::rank_id rank);
  // The unfinished requests in start order (log order), so lines read like the run.
  std::vector<rank_room> unfinished_in_start_order() const;

  std::uint64_t heal_from_us_;
  std::uint64_t bound_us_;
  // The request of `who`, which must have been named.
  const request& request_of(const rank_room& who) const;

  // By rank, then request: a rank's tree stays the size of its own requests however many
  // ranks the world has (one tree over (rank, request) grew with them at every start).
  dense_index_map<core::rank_id, std::map<core::room_key, request>> requests_;
  std::set<due> unfinished_;  // by deadline, then rank and request: deterministic
  std::set<core::rank_id> stopped_;  // ranks that died: not judged any more
};

}  // namespace kvsim::properties
