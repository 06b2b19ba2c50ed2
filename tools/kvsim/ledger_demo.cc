#include "tools/kvsim/ledger_demo.h"

#include <algorithm>
#include <vector>

#include "core/events.h"
#include "core/page_ledger.h"
#include "core/ports.h"

namespace kvsim::tools {
namespace {

using core::page_index;
using core::room_key;

class printing_sink : public core::event_sink {
 public:
  explicit printing_sink(std::ostream& out) : out_(out) {}
  void emit(const core::event& e) override { out_ << "    " << core::describe(e) << "\n"; }

 private:
  std::ostream& out_;
};

// Request A (room 7, generation 0) has a destination transfer in flight on decode when it is
// aborted; request B reuses room id 7 (generation 1) and allocates at once. Returns the pages
// B received that A's transfer still writes.
std::vector<page_index> play(std::ostream& out, core::release_policy policy) {
  printing_sink sink(out);
  core::page_ledger ledger(/*rank=*/1, /*pages_total=*/8, sink,
                           core::ledger_options{core::allocation_order::lifo, policy});
  const room_key request_a{7, 0};
  const room_key request_b{7, 1};

  const auto pages_a = ledger.allocate(request_a, 3).value();
  const auto transfer_a = ledger.lease(request_a, core::lease_role::destination, pages_a).value();
  // Decode aborts A while the copy into its pages is still running.
  (void)ledger.release_all(request_a);
  const auto pages_b = ledger.allocate(request_b, 3).value();

  std::vector<page_index> clobbered;
  for (page_index page : pages_b) {
    if (std::find(pages_a.begin(), pages_a.end(), page) != pages_a.end()) {
      clobbered.push_back(page);
    }
  }
  // Checked while A's copy is still in flight: the moment the corruption can happen.
  const auto problems = ledger.check_consistency();
  out << "  ledger consistency with A's copy in flight: "
      << (problems.empty() ? "ok" : problems.front()) << "\n";
  // A's copy finally ends; under the production policy this is what frees A's pages.
  (void)ledger.end_lease(transfer_a);
  return clobbered;
}

void report(std::ostream& out, const std::vector<page_index>& clobbered) {
  if (clobbered.empty()) {
    out << "  => B received no page that A's transfer still writes.\n\n";
    return;
  }
  out << "  => B received page(s)";
  for (page_index page : clobbered) out << " " << page;
  out << " while A's transfer still writes them: cross-request corruption (DOMAIN.md B1).\n\n";
}

}  // namespace

int run_ledger_demo(std::ostream& out) {
  out << "kvsim demo: the page-42 shape on the page ledger (decode rank 1, 8 pages, LIFO)\n"
      << "A (room 7/gen 0) writes 3 pages by transfer; decode aborts A; B (room 7/gen 1)\n"
      << "reuses the room id and allocates 3 pages before A's transfer ends.\n\n";
  out << "historical release (free_while_leased):\n";
  report(out, play(out, core::release_policy::free_while_leased));
  out << "production release (defer_while_leased):\n";
  report(out, play(out, core::release_policy::defer_while_leased));
  return 0;
}

}  // namespace kvsim::tools
