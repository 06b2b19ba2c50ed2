#include "properties/host_page_checker.h"

#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {

std::optional<sim::finding> host_page_checker::observe(const sim::sim_event& e, std::size_t index) {
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  const event_mark at{e.step, index};
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

std::optional<sim::finding> host_page_checker::at_quiescence() {
  struct left {
    std::vector<core::page_index> pages;
    std::vector<std::uint64_t> steps;
  };
  std::map<std::pair<core::rank_id, core::room_key>, left> never_freed;  // ordered: deterministic
  sim::finding found{"I6", "I6: at quiescence ", {}, {}};
  for (const auto& [id, page] : pages_) {
    if (page.freed) continue;
    const auto& [rank, key, p] = id;
    left& l = never_freed[{rank, key}];
    l.pages.push_back(p);
    l.steps.push_back(page.allocated.step);
    found.evidence.push_back(page.allocated.index);
    found.details.push_back("rank " + std::to_string(rank) + " host page " + std::to_string(p) +
                            " of " + core::to_string(key) + ", allocated at step " +
                            std::to_string(page.allocated.step) + ", never freed");
  }
  if (never_freed.empty()) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& [id, l] : never_freed) {
    const bool one = l.pages.size() == 1;
    parts.push_back(std::string(one ? "host page " : "host pages ") +
                    (one ? std::to_string(l.pages[0]) : pages_text(l.pages)) + " of " +
                    core::to_string(id.second) + " on rank " + std::to_string(id.first) +
                    " (allocated at " + steps_text(l.steps) + ") " + (one ? "was" : "were") +
                    " never freed");
  }
  for (std::size_t i = 0; i < parts.size(); ++i) found.message += (i ? "; " : "") + parts[i];
  sort_evidence(found.evidence);
  return found;
}

}  // namespace kvsim::properties
