#include "properties/data_integrity_checker.h"

#include <string>
#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {

sim::event_kinds data_integrity_checker::subscriptions() const {
  return sim::event_kinds::of<sim::page_written, sim::transfer_page_copied,
                              sim::storage_page_written, sim::page_read>();
}

std::optional<sim::finding> data_integrity_checker::observe(const sim::sim_event& e,
                                                            std::size_t index) {
  const event_mark at{e.step, index};
  if (const auto* written = std::get_if<sim::page_written>(&e.body)) {
    contents_[written->rank][written->page] =
        provenance{written->writer, written->logical_page, at, {}};
  } else if (const auto* copied = std::get_if<sim::transfer_page_copied>(&e.body)) {
    const provenance* source = origin(copied->source_rank, copied->source_page);
    std::optional<provenance> landed;  // empty: bytes of unknown origin now
    if (source != nullptr) {
      landed = provenance{source->writer, source->logical_page, at, copied->transfer};
    }
    contents_[copied->destination_rank][copied->destination_page] = landed;
  } else if (const auto* stored = std::get_if<sim::storage_page_written>(&e.body)) {
    // A storage read's page landed in host memory (the read's id tells which storage call).
    contents_[stored->rank][stored->page] =
        provenance{stored->owner, stored->logical_page, at, {}};
  } else if (const auto* read = std::get_if<sim::page_read>(&e.body)) {
    return check_read(*read, at);
  }
  return std::nullopt;
}

const data_integrity_checker::provenance* data_integrity_checker::origin(
    core::rank_id rank, core::page_index page) const {
  const auto pages = contents_.find(rank);
  if (pages == contents_.end()) return nullptr;
  const auto slot = (*pages).second.find(page);
  if (slot == (*pages).second.end() || !(*slot).second) return nullptr;
  return &*(*slot).second;
}

std::optional<sim::finding> data_integrity_checker::check_read(const sim::page_read& read,
                                                               event_mark at) const {
  if (read.intact) return std::nullopt;
  std::string message = "I7: " + core::to_string(read.reader) + " read page " +
                        std::to_string(read.page) + " on rank " + std::to_string(read.rank) +
                        " at step " + std::to_string(at.step) + " (its logical page " +
                        std::to_string(read.logical_page) + ") and found ";
  if (!read.found) {
    message += "unrecognisable bytes";
  } else if (*read.found == read.reader) {
    message += "its own request's bytes, but not those of that logical page";
  } else {
    message += "bytes written for " + core::to_string(*read.found);
  }
  std::vector<std::size_t> evidence{at.index};
  std::vector<std::string> details;
  if (const provenance* found_origin = origin(read.rank, read.page)) {
    const provenance& p = *found_origin;
    std::string how = "page " + std::to_string(read.page) + " on rank " +
                      std::to_string(read.rank) + " last received logical page " +
                      std::to_string(p.logical_page) + " of " + core::to_string(p.writer) +
                      " at step " + std::to_string(p.landed.step);
    if (p.by_transfer) how += " (transfer " + std::to_string(*p.by_transfer) + ")";
    details.push_back(std::move(how));
    if (read.found && *read.found == p.writer) {
      message += p.by_transfer ? " (copied there by transfer " + std::to_string(*p.by_transfer) +
                                     " at step " + std::to_string(p.landed.step) + ")"
                               : " (written there at step " + std::to_string(p.landed.step) + ")";
      evidence.push_back(p.landed.index);
    }
  }
  sort_evidence(evidence);
  return sim::finding{"I7", std::move(message), std::move(evidence), std::move(details)};
}

}  // namespace kvsim::properties
