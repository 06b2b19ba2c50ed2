#include "real_backend/host/host_page_ledger.h"

namespace kvsim::real {

std::vector<std::string> host_page_ledger::allocated(const core::host_pages_allocated& a) {
  for (core::page_index p : a.pages) pages_[{a.key, p}] = holding{a.key, std::nullopt};
  return {};
}

std::vector<std::string> host_page_ledger::freed(const core::host_pages_freed& f) {
  ++frees_;
  std::vector<std::string> findings;
  const std::string freer = core::to_string(f.by);
  for (core::page_index p : f.pages) {
    const auto it = pages_.find({f.key, p});
    if (it == pages_.end()) {
      findings.push_back("I6: the " + freer + " freed host page " + std::to_string(p) + " of " +
                         core::to_string(f.key) + " on rank " + std::to_string(rank_) +
                         ", but the page was never allocated to that request");
    } else if (it->second.freed_by) {
      findings.push_back("I6: host page " + std::to_string(p) + " of " + core::to_string(f.key) +
                         " on rank " + std::to_string(rank_) + " was freed twice: by the " +
                         core::to_string(*it->second.freed_by) + " and by the " + freer);
    } else {
      it->second.freed_by = f.by;
    }
  }
  return findings;
}

}  // namespace kvsim::real
