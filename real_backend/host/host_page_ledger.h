#pragma once
// Who holds each host page of one rank (HiCache's host memory), as the core decides it: the
// prefetch coordinator emits host_pages_allocated / host_pages_freed and this ledger applies
// them. A page freed twice, or freed by a request that never had it, is refused and
// described as a finding (DOMAIN.md I6), in the words of the simulator's host page checker.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/events.h"

namespace kvsim::real {

class host_page_ledger {
 public:
  explicit host_page_ledger(core::rank_id rank) : rank_(rank) {}

  // Every finding line the decision causes (none when it is sound).
  std::vector<std::string> allocated(const core::host_pages_allocated& a);
  std::vector<std::string> freed(const core::host_pages_freed& f);

  std::uint32_t frees() const { return frees_; }  // host_pages_freed decisions applied

 private:
  struct holding {
    core::room_key key;
    std::optional<core::host_page_owner> freed_by;
  };

  core::rank_id rank_;
  std::map<std::pair<core::room_key, core::page_index>, holding> pages_;
  std::uint32_t frees_ = 0;
};

}  // namespace kvsim::real
