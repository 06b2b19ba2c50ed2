#include "properties/prefetch_leak_checker.h"

#include <string>
#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {

sim::event_kinds prefetch_leak_checker::subscriptions() const {
  return sim::event_kinds::of<core::prefetch_registered, core::prefetch_erased,
                              core::prefetch_lock_taken, core::prefetch_lock_released,
                              core::host_pages_allocated, core::host_pages_freed>();
}

std::optional<sim::finding> prefetch_leak_checker::observe(const sim::sim_event& e,
                                                           std::size_t index) {
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  const event_mark at{e.step, index};
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, core::prefetch_registered>) {
          held_[{rank, body.key}].entry = at;
        } else if constexpr (std::is_same_v<T, core::prefetch_erased>) {
          held_[{rank, body.key}].entry.reset();
        } else if constexpr (std::is_same_v<T, core::prefetch_lock_taken>) {
          held_[{rank, body.key}].lock = at;
        } else if constexpr (std::is_same_v<T, core::prefetch_lock_released>) {
          held_[{rank, body.key}].lock.reset();
        } else if constexpr (std::is_same_v<T, core::host_pages_allocated>) {
          for (core::page_index p : body.pages) held_[{rank, body.key}].host_pages[p] = at;
        } else if constexpr (std::is_same_v<T, core::host_pages_freed>) {
          for (core::page_index p : body.pages) held_[{rank, body.key}].host_pages.erase(p);
        }
      },
      decided->what.body);
  return std::nullopt;
}

std::optional<sim::finding> prefetch_leak_checker::at_quiescence() {
  sim::finding found{"I8", "I8: at quiescence ", {}, {}};
  std::vector<std::string> parts;
  for (const auto& [id, h] : held_) {
    if (h.empty()) continue;
    const auto& [rank, key] = id;
    const std::string who = "rank " + std::to_string(rank) + " ";
    const std::string request = core::to_string(key);
    std::vector<std::string> things;
    if (h.entry) {
      things.push_back("the prefetch entry (registered at step " + std::to_string(h.entry->step) +
                       ")");
      found.details.push_back(who + "prefetch entry of " + request + ", registered at step " +
                              std::to_string(h.entry->step) + ", never erased");
      found.evidence.push_back(h.entry->index);
    }
    if (h.lock) {
      things.push_back("its lock (taken at step " + std::to_string(h.lock->step) + ")");
      found.details.push_back(who + "prefetch lock of " + request + ", taken at step " +
                              std::to_string(h.lock->step) + ", never released");
      found.evidence.push_back(h.lock->index);
    }
    if (!h.host_pages.empty()) {
      std::vector<core::page_index> pages;
      std::vector<std::uint64_t> steps;
      for (const auto& [p, mark] : h.host_pages) {
        pages.push_back(p);
        steps.push_back(mark.step);
        found.evidence.push_back(mark.index);
        found.details.push_back(who + "host page " + std::to_string(p) + " of " + request +
                                ", allocated at step " + std::to_string(mark.step) +
                                ", never freed");
      }
      things.push_back("host pages " + core::pages_text(pages) + " (allocated at " +
                       steps_text(steps) + ")");
    }
    parts.push_back(who + "still holds, of " + request + ", " + join_and(things));
  }
  if (parts.empty()) return std::nullopt;
  for (std::size_t i = 0; i < parts.size(); ++i) found.message += (i ? "; " : "") + parts[i];
  sort_evidence(found.evidence);
  return found;
}

}  // namespace kvsim::properties
