// What the exhaustive search (sim/search/dpor.h) reads of a world beyond its step log: the terminal
// state of a finished run (its count of distinct outcomes, its soundness tests), and the
// pages whose owner a core decision changed (declared as writes of those pages).
#include <map>
#include <type_traits>
#include <string>
#include <variant>

#include "sim/world.h"

namespace kvsim::sim {

std::uint64_t world::terminal_digest() const {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto add = [&hash](std::uint64_t value) {
    hash ^= value;
    hash *= 0x100000001b3ULL;
    hash ^= hash >> 29;
  };
  const auto add_text = [&add](const std::string& text) { add(name_token(text)); };
  if (found_) {
    add_text("finding " + found_->invariant);
    return hash;
  }
  add(now_us_);
  std::map<core::rank_id, std::uint64_t> per_rank;
  for (const sim_event& e : events_) {
    const bool core = std::holds_alternative<core_decided>(e.body);
    const bool audit = std::holds_alternative<ledger_audited>(e.body) ||
                       std::holds_alternative<core_audited>(e.body);
    if (!core && !audit) continue;
    const std::string text = describe(sim_event{0, 0, no_actor, e.body}, names_);
    if (audit) {
      add_text(text);
      continue;
    }
    std::uint64_t& rank_hash = per_rank.try_emplace(std::get<core_decided>(e.body).what.rank,
                                                    0xcbf29ce484222325ULL).first->second;
    rank_hash = (rank_hash ^ name_token(text)) * 0x100000001b3ULL;
  }
  for (const auto& [rank, rank_hash] : per_rank) {
    add(rank);
    add(rank_hash);
  }
  for (const digest_fn& part : digests_) part(add);
  return hash;
}

void world::touch_pages_owned(const core::event& e) const {
  if (!config_.record_steps) return;
  const auto pages = [&](const std::vector<core::page_index>& list) {
    for (const core::page_index page : list) step_log_.touch(page_object(e.rank, page), access::write);
  };
  std::visit(
      [&](const auto& body) {
        using body_type = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<body_type, core::page_freed>) {
          step_log_.touch(page_object(e.rank, body.page), access::write);
        } else if constexpr (std::is_same_v<body_type, core::release_requested>) {
          pages(body.freed_now);
          pages(body.deferred);
        } else if constexpr (std::is_same_v<body_type, core::pages_allocated> ||
                             std::is_same_v<body_type, core::lease_started> ||
                             std::is_same_v<body_type, core::lease_ended> ||
                             std::is_same_v<body_type, core::lease_quarantined> ||
                             std::is_same_v<body_type, core::quarantine_confirmed> ||
                             std::is_same_v<body_type, core::host_pages_allocated> ||
                             std::is_same_v<body_type, core::host_pages_freed>) {
          pages(body.pages);
        }
      },
      e.body);
}

}  // namespace kvsim::sim
