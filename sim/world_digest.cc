// world::terminal_digest: the terminal state of a finished run, for the exhaustive search's
// count of distinct outcomes and its soundness tests (sim/dpor.h).
#include <map>
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

}  // namespace kvsim::sim
