#pragma once
// DOMAIN.md I6: host pages of a prefetch are freed exactly once.
//
// Per (rank, request, host page), from host_pages_allocated and host_pages_freed:
//   - a free of a page already freed since the request's last allocation of it fires as a
//     double free, naming both freers (scheduler or io_thread) and their steps;
//   - a free of a page never allocated to that request fires;
//   - at quiescence, a page allocated and never freed fires.
// When the page has meanwhile been allocated to another request, the message says so: the
// wrong free then takes that request's page. A finding names the first bad page of a free in
// its message and every further one in details. Evidence: the allocation, the first free and
// the offending free (or the allocations of every page left).
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/events.h"
#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class host_page_checker : public sim::checker {
 public:
  const char* name() const override { return "host_page"; }
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;
  std::optional<sim::finding> at_quiescence() override;

 private:
  using request_page = std::tuple<core::rank_id, core::room_key, core::page_index>;
  using rank_page = std::pair<core::rank_id, core::page_index>;

  struct freeing {
    event_mark at;
    core::host_page_owner by = core::host_page_owner::scheduler;
  };
  struct page_state {
    event_mark allocated;
    std::optional<freeing> freed;  // since the last allocation
  };
  struct holder {
    core::room_key key;
    event_mark allocated;
  };

  std::optional<sim::finding> check_free(const core::host_pages_freed& freed, core::rank_id rank,
                                         event_mark at);
  std::string taken_text(core::rank_id rank, core::page_index page, const core::room_key& key,
                         std::vector<std::size_t>& evidence) const;

  std::map<request_page, page_state> pages_;
  std::map<rank_page, holder> holders_;  // who holds each host page now (allocated, not freed)
};

}  // namespace kvsim::properties
