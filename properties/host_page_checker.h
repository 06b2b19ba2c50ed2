#pragma once
// DOMAIN.md I6: host pages of a prefetch are freed exactly once, and written only while
// their request holds them.
//
// Per (rank, request, host page), from host_pages_allocated and host_pages_freed:
//   - a free of a page already freed since the request's last allocation of it fires as a
//     double free, naming both freers (scheduler or io_thread) and their steps;
//   - a free of a page never allocated to that request fires;
// and per (rank, host page), from the simulated storage's storage_page_written (the bytes a
// storage read put into host memory, sim/sim_storage.h):
//   - a write into a page that is free (its request already freed it: H2's late write) or
//     that another request now holds (the write lands in that request's bytes) fires.
// When the page has meanwhile been allocated to another request, the message says so: the
// wrong free then takes that request's page. A finding names the first bad page of a free in
// its message and every further one in details. Evidence: the allocation, the first free and
// the offending free or write. Pages never freed are a leak: I8, prefetch_leak_checker.h.
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
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

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

  struct last_free {
    core::room_key key;
    freeing by;
  };

  std::optional<sim::finding> check_free(const core::host_pages_freed& freed, core::rank_id rank,
                                         event_mark at);
  std::optional<sim::finding> check_write(const sim::storage_page_written& write,
                                          event_mark at) const;
  std::string taken_text(core::rank_id rank, core::page_index page, const core::room_key& key,
                         std::vector<std::size_t>& evidence) const;

  std::map<request_page, page_state> pages_;
  std::map<rank_page, holder> holders_;  // who holds each host page now (allocated, not freed)
  std::map<rank_page, last_free> last_freed_;  // the latest free of each host page
};

}  // namespace kvsim::properties
