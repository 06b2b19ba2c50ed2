#include "properties/use_after_free_checker.h"

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "core/errors.h"

namespace kvsim::properties {
namespace {

struct page_use {
  const char* role;  // "source" or "destination"
  const char* verb;  // what the transfer did to the page
  core::rank_id rank;
  core::page_index page;
};

// Why the page is not the transfer's, in the words of its history:
//   "the page was freed at step 30 and allocated to room 7/gen 1 at step 35"
//   "the page was freed at step 30 and is free"
//   "the page was allocated to room 9/gen 0 at step 12"   (never freed since we know it)
//   "the page was never allocated and is free"
std::string history_text(const page_view& page) {
  const bool freed_before_owner =
      page.last_freed && (!page.owner || !page.last_allocated ||
                          page.last_freed->at.index < page.last_allocated->at.index);
  std::string text = "the page was ";
  if (freed_before_owner) text += "freed at step " + std::to_string(page.last_freed->at.step);
  if (page.owner) {
    if (freed_before_owner) text += " and ";
    text += "allocated to " + core::to_string(*page.owner);
    if (page.last_allocated) text += " at step " + std::to_string(page.last_allocated->at.step);
    return text;
  }
  return text + (freed_before_owner ? " and is free" : "never allocated and is free");
}

// The events that prove it, in log order: the free and the re-allocation (when known), then
// the copy itself.
std::vector<std::size_t> evidence_for(const page_view& page, std::size_t copy_index) {
  std::vector<std::size_t> evidence;
  if (page.last_freed) evidence.push_back(page.last_freed->at.index);
  if (page.owner && page.last_allocated) evidence.push_back(page.last_allocated->at.index);
  evidence.push_back(copy_index);
  std::sort(evidence.begin(), evidence.end());
  evidence.erase(std::unique(evidence.begin(), evidence.end()), evidence.end());
  return evidence;
}

std::string misuse_text(const core::ledger_misuse& misuse, core::rank_id rank, std::uint64_t step) {
  std::string text = std::string("ledger misuse: ") + core::to_string(misuse.error) + " on rank " +
                     std::to_string(rank) + " at step " + std::to_string(step) + " (caller " +
                     core::to_string(misuse.caller);
  if (misuse.page) text += ", page " + std::to_string(*misuse.page);
  if (misuse.lease) text += ", lease " + std::to_string(*misuse.lease);
  return text + ")";
}

}  // namespace

// The ledger's decisions only to replay them: a shared replay is fed by its own feed.
sim::event_kinds use_after_free_checker::subscriptions() const {
  return (ownership_.shared() ? sim::event_kinds{} : page_ownership::kinds()) |
         sim::event_kinds::of<core::ledger_misuse, sim::misuse_attempted, sim::misuse_answered,
                              sim::transfer_page_copied>();
}

std::optional<sim::finding> use_after_free_checker::observe(const sim::sim_event& e,
                                                            std::size_t index) {
  if (const auto* call = std::get_if<sim::misuse_attempted>(&e.body)) {
    careless_call_on_ = call->rank;
    return std::nullopt;
  }
  if (std::holds_alternative<sim::misuse_answered>(e.body)) {
    careless_call_on_.reset();
    return std::nullopt;
  }
  if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
    const bool careless = careless_call_on_ == decided->what.rank;
    if (const auto* misuse = std::get_if<core::ledger_misuse>(&decided->what.body);
        misuse != nullptr && !careless) {
      return sim::finding{"misuse", misuse_text(*misuse, decided->what.rank, e.step), {index}, {}};
    }
    ownership_.observe(e, index);
    return std::nullopt;
  }
  if (const auto* copy = std::get_if<sim::transfer_page_copied>(&e.body)) {
    return check_copy(*copy, e.step, index);
  }
  return std::nullopt;
}

std::optional<sim::finding> use_after_free_checker::check_copy(
    const sim::transfer_page_copied& copy, std::uint64_t step, std::size_t index) const {
  // Destination first: a late write into a reused page (B1) is the headline corruption; a
  // source read of a reused page (B3) corrupts the same way one hop later.
  const page_use uses[] = {
      {"destination", "wrote", copy.destination_rank, copy.destination_page},
      {"source", "read", copy.source_rank, copy.source_page},
  };
  std::optional<sim::finding> found;
  for (const page_use& use : uses) {
    const page_view& page = ownership_.view().page(use.rank, use.page);
    if (page.owner == copy.owner) continue;
    const std::string line = "I1: transfer " + std::to_string(copy.transfer) + " of " +
                             core::to_string(copy.owner) + " " + use.verb + " " + use.role +
                             " page " + std::to_string(use.page) + " on rank " +
                             std::to_string(use.rank) + " at step " + std::to_string(step) +
                             ", but " + history_text(page);
    if (!found) {
      found = sim::finding{"I1", line, evidence_for(page, index), {}};
    } else {
      // Both ends broken at once: the message names the destination, details the source.
      found->details.push_back(line);
      for (std::size_t i : evidence_for(page, index)) found->evidence.push_back(i);
      std::sort(found->evidence.begin(), found->evidence.end());
      found->evidence.erase(std::unique(found->evidence.begin(), found->evidence.end()),
                            found->evidence.end());
    }
  }
  return found;
}

}  // namespace kvsim::properties
