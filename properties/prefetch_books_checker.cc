#include "properties/prefetch_books_checker.h"

#include <algorithm>
#include <string>
#include <variant>

namespace kvsim::properties {
namespace {

std::string rank_text(core::rank_id rank) { return "rank " + std::to_string(rank); }

}  // namespace

sim::event_kinds prefetch_books_checker::subscriptions() const {
  return sim::event_kinds::of<sim::storage_read_ended, core::prefetch_registered,
                              core::prefetch_lock_taken, core::prefetch_erased,
                              core::prefetch_classified, core::prefetch_agreed,
                              core::prefetch_revoked, core::prefetch_drained,
                              core::prefetch_lock_released, core::host_pages_freed>();
}

std::optional<sim::finding> prefetch_books_checker::observe(const sim::sim_event& e,
                                                            std::size_t index) {
  if (const auto* ended = std::get_if<sim::storage_read_ended>(&e.body)) {
    books_[{ended->rank, ended->owner}].read_completed = ended->completed;
    return std::nullopt;
  }
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  return follow(decided->what.rank, decided->what.body, e.step, index);
}

std::optional<prefetch_books_checker::disagreement> prefetch_books_checker::follow_classification(
    core::rank_id rank, const core::event_body& body, std::size_t index, bool& handled) {
  handled = true;
  if (const auto* registered = std::get_if<core::prefetch_registered>(&body)) {
    books& b = books_[{rank, registered->key}];
    b = books{};
    b.state = core::prefetch_state::pending;
    b.since = index;
  } else if (const auto* locked = std::get_if<core::prefetch_lock_taken>(&body)) {
    books& b = books_[{rank, locked->key}];
    if (b.state != core::prefetch_state::pending) {
      return disagreement{locked->key,
                          std::string("took its lock while ") + core::to_string(b.state) +
                              " (a lock needs a registered prefetch without one)",
                          {b.since}};
    }
    b.state = core::prefetch_state::active;
    b.since = index;
  } else if (const auto* erased = std::get_if<core::prefetch_erased>(&body)) {
    books& b = books_[{rank, erased->key}];
    b.state = core::prefetch_state::missing;
    b.since = index;
  } else if (const auto* classified = std::get_if<core::prefetch_classified>(&body)) {
    books& b = books_[{rank, classified->key}];
    if (classified->local != b.state) {
      return disagreement{classified->key,
                          std::string("was classified ") + core::to_string(classified->local) +
                              ", but its events make it " + core::to_string(b.state),
                          {b.since}};
    }
    b.classified = classified->local;
    b.agreed = false;
    if (classified->local == core::prefetch_state::pending) b.owes_revoke = index;
    core::prefetch_state& group = classified_max_[classified->key];
    group = std::max(group, classified->local);
  } else if (const auto* agreed = std::get_if<core::prefetch_agreed>(&body)) {
    books& b = books_[{rank, agreed->key}];
    const core::prefetch_state group = classified_max_[agreed->key];
    if (!b.classified) return disagreement{agreed->key, "reported an agreement it never classified for", {}};
    if (agreed->group_max != group) {
      return disagreement{agreed->key,
                          std::string("reported the group's agreement as ") +
                              core::to_string(agreed->group_max) + ", but the group classified " +
                              core::to_string(group) + " at most",
                          {}};
    }
    b.agreed = true;
  } else {
    handled = false;
  }
  return std::nullopt;
}

std::optional<prefetch_books_checker::disagreement> prefetch_books_checker::follow_abort(
    core::rank_id rank, const core::event_body& body) {
  // Whatever the rank does to a prefetch it classified for an abort comes after the agreement.
  const auto needs_agreement = [&](const core::room_key& key) -> std::optional<disagreement> {
    const books& b = books_[{rank, key}];
    if (b.classified && !b.agreed) {
      return disagreement{key, "was acted on after its classification but before the group agreed", {b.since}};
    }
    return std::nullopt;
  };
  if (const auto* revoked = std::get_if<core::prefetch_revoked>(&body)) {
    if (auto early = needs_agreement(revoked->key)) return early;
    books& b = books_[{rank, revoked->key}];
    if (!b.owes_revoke) return disagreement{revoked->key, "was revoked though not classified pending", {}};
    b.owes_revoke.reset();
  } else if (const auto* drained = std::get_if<core::prefetch_drained>(&body)) {
    if (auto early = needs_agreement(drained->key)) return early;
    books& b = books_[{rank, drained->key}];
    if (!b.read_completed || *b.read_completed != drained->read_completed) {
      return disagreement{drained->key,
                          std::string("reported its read drained ") +
                              (drained->read_completed ? "completed" : "failed") + ", but the read " +
                              (!b.read_completed ? std::string("had not ended")
                               : *b.read_completed ? "completed"
                                                   : "failed part-way"),
                          {}};
    }
    b.drained = drained->read_completed;
  } else if (const auto* released = std::get_if<core::prefetch_lock_released>(&body)) {
    if (auto early = needs_agreement(released->key)) return early;
  } else if (const auto* freed = std::get_if<core::host_pages_freed>(&body)) {
    if (auto early = needs_agreement(freed->key)) return early;
    const books& b = books_[{rank, freed->key}];
    if (b.drained) {
      const core::host_page_owner by =
          *b.drained ? core::host_page_owner::scheduler : core::host_page_owner::io_thread;
      if (freed->by != by) {
        return disagreement{freed->key,
                            std::string("had its host pages freed by the ") + core::to_string(freed->by) +
                                " after a read that " + (*b.drained ? "completed" : "failed part-way") +
                                " (the " + core::to_string(by) + "'s to free)",
                            {}};
      }
    }
  }
  return std::nullopt;
}

std::optional<sim::finding> prefetch_books_checker::follow(core::rank_id rank,
                                                           const core::event_body& body,
                                                           std::uint64_t step,
                                                           std::size_t index) {
  bool handled = false;
  std::optional<disagreement> d = follow_classification(rank, body, index, handled);
  if (!handled) d = follow_abort(rank, body);
  if (!d) return std::nullopt;
  d->evidence.push_back(index);
  return sim::finding{"I6",
                      "I6: " + rank_text(rank) + "'s prefetch of " + core::to_string(d->key) + " " +
                          d->why + " at step " + std::to_string(step),
                      std::move(d->evidence),
                      {}};
}

std::optional<sim::finding> prefetch_books_checker::at_quiescence() {
  for (const auto& [where, b] : books_) {
    if (!b.owes_revoke) continue;
    return sim::finding{"I6",
                        "I6: " + rank_text(where.first) + "'s prefetch of " +
                            core::to_string(where.second) +
                            " was classified pending but never revoked",
                        {*b.owes_revoke},
                        {}};
  }
  return std::nullopt;
}

}  // namespace kvsim::properties
