#include "properties/host_page_checker.h"

#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {

sim::event_kinds host_page_checker::subscriptions() const {
  return sim::event_kinds::of<sim::storage_page_written, core::host_pages_allocated,
                              core::host_pages_freed>();
}

std::optional<sim::finding> host_page_checker::observe(const sim::sim_event& e, std::size_t index) {
  const event_mark at{e.step, index};
  if (const auto* write = std::get_if<sim::storage_page_written>(&e.body)) {
    return check_write(*write, at);
  }
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  if (const auto* allocated = std::get_if<core::host_pages_allocated>(&decided->what.body)) {
    for (core::page_index p : allocated->pages) {
      pages_.insert_or_assign({rank, allocated->key, p}, page_state{at, std::nullopt});
      holders_.insert_or_assign({rank, p}, holder{allocated->key, at});
    }
  } else if (const auto* freed = std::get_if<core::host_pages_freed>(&decided->what.body)) {
    return check_free(*freed, rank, at);
  }
  return std::nullopt;
}

// "; the page now belongs to room 9/gen 0 (allocated at step 6)", or "" when it does not.
std::string host_page_checker::taken_text(core::rank_id rank, core::page_index page,
                                          const core::room_key& key,
                                          std::vector<std::size_t>& evidence) const {
  const auto it = holders_.find({rank, page});
  if (it == holders_.end() || it->second.key == key) return "";
  evidence.push_back(it->second.allocated.index);
  return "; the page now belongs to " + core::to_string(it->second.key) + " (allocated at step " +
         std::to_string(it->second.allocated.step) + ")";
}

std::optional<sim::finding> host_page_checker::check_free(const core::host_pages_freed& freed,
                                                          core::rank_id rank, event_mark at) {
  std::optional<sim::finding> found;
  const std::string freer = core::to_string(freed.by);
  const std::string request = core::to_string(freed.key);
  for (core::page_index p : freed.pages) {
    std::vector<std::size_t> evidence{at.index};
    std::string line;
    const auto it = pages_.find({rank, freed.key, p});
    if (it == pages_.end()) {
      line = "I6: the " + freer + " freed host page " + std::to_string(p) + " of " + request +
             " on rank " + std::to_string(rank) + " at step " + std::to_string(at.step) +
             ", but the page was never allocated to that request";
    } else if (it->second.freed) {
      const freeing& first = *it->second.freed;
      line = "I6: host page " + std::to_string(p) + " of " + request + " on rank " +
             std::to_string(rank) + " was freed twice: by the " + core::to_string(first.by) +
             " at step " + std::to_string(first.at.step) + " and by the " + freer + " at step " +
             std::to_string(at.step) + " (allocated at step " +
             std::to_string(it->second.allocated.step) + ")";
      evidence.push_back(it->second.allocated.index);
      evidence.push_back(first.at.index);
    } else {
      it->second.freed = freeing{at, freed.by};
      last_freed_.insert_or_assign({rank, p}, last_free{freed.key, freeing{at, freed.by}});
      if (const auto h = holders_.find({rank, p});
          h != holders_.end() && h->second.key == freed.key) {
        holders_.erase(h);
      }
      continue;
    }
    line += taken_text(rank, p, freed.key, evidence);
    if (!found) {
      found = sim::finding{"I6", std::move(line), {}, {}};
    } else {
      found->details.push_back(std::move(line));
    }
    found->evidence.insert(found->evidence.end(), evidence.begin(), evidence.end());
  }
  if (found) sort_evidence(found->evidence);
  return found;
}

// A storage read wrote one host page: its request must hold the page now.
std::optional<sim::finding> host_page_checker::check_write(const sim::storage_page_written& write,
                                                           event_mark at) const {
  const auto held = holders_.find({write.rank, write.page});
  if (held != holders_.end() && held->second.key == write.owner) return std::nullopt;
  std::string line = "I6: the storage read of " + core::to_string(write.owner) +
                     " wrote host page " + std::to_string(write.page) + " on rank " +
                     std::to_string(write.rank) + " at step " + std::to_string(at.step) +
                     " (its logical page " + std::to_string(write.logical_page) + "), but ";
  std::vector<std::size_t> evidence{at.index};
  const auto freed = last_freed_.find({write.rank, write.page});
  // "the scheduler freed it from room 7/gen 0 at step 3", or "" when it was never freed.
  const auto freed_text = [&]() -> std::string {
    if (freed == last_freed_.end()) return "";
    evidence.push_back(freed->second.by.at.index);
    return std::string("the ") + core::to_string(freed->second.by.by) + " freed it from " +
           core::to_string(freed->second.key) + " at step " +
           std::to_string(freed->second.by.at.step);
  };
  if (held != holders_.end()) {
    evidence.push_back(held->second.allocated.index);
    const std::string how = freed_text();
    line += "the page belongs to " + core::to_string(held->second.key) + " (allocated at step " +
            std::to_string(held->second.allocated.step) + (how.empty() ? "" : "; " + how) +
            "): the write lands in that request's bytes";
  } else if (freed != last_freed_.end()) {
    line += "the page is free (" + freed_text() + ")";
  } else {
    line += "the page was never allocated";
  }
  sort_evidence(evidence);
  return sim::finding{"I6", std::move(line), std::move(evidence), {}};
}

}  // namespace kvsim::properties
