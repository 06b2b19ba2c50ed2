#include "properties/status_books_checker.h"

#include <string>
#include <variant>

namespace kvsim::properties {
namespace {

std::string status_text(const std::optional<core::kv_status>& status) {
  return status ? core::to_string(*status) : "no status";
}

}  // namespace

std::optional<sim::finding> status_books_checker::observe(const sim::sim_event& e,
                                                          std::size_t index) {
  if (const auto* read = std::get_if<sim::status_read>(&e.body)) {
    const replayed& books = statuses_[{read->rank, read->key}];
    if (read->status == books.status) return std::nullopt;
    sim::finding found{"I4",
                       "I4: rank " + std::to_string(read->rank) + "'s status table answered " +
                           status_text(read->status) + " for " + core::to_string(read->key) +
                           " at step " + std::to_string(e.step) + ", but its events gave it " +
                           status_text(books.status),
                       {},
                       {}};
    if (books.since) found.evidence.push_back(*books.since);
    found.evidence.push_back(index);
    return found;
  }
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  if (const auto* change = std::get_if<core::status_changed>(&decided->what.body)) {
    replayed& books = statuses_[{rank, change->key}];
    if (change->from != books.status) {
      sim::finding found{"I4",
                         "I4: rank " + std::to_string(rank) + " changed the status of " +
                             core::to_string(change->key) + " from " + status_text(change->from) +
                             " at step " + std::to_string(e.step) + ", but its events had left " +
                             status_text(books.status),
                         {},
                         {}};
      if (books.since) found.evidence.push_back(*books.since);
      found.evidence.push_back(index);
      return found;
    }
    books = {change->to, index};
  } else if (const auto* forgotten = std::get_if<core::status_forgotten>(&decided->what.body)) {
    statuses_[{rank, forgotten->key}] = {std::nullopt, index};
  }
  return std::nullopt;
}

}  // namespace kvsim::properties
