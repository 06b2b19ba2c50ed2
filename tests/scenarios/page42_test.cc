// The seed change's red/green as a scripted test (the gate holds A's transfer before page 1;
// no search is needed for the shape): with the historical B1 cleanup, decode frees A's pages
// while the held copy is pending, B (room 42 again) gets them by LIFO, and A's resumed copy
// writes into B's page; with `safe` every byte of A lands before B is given any page of A's.
#include <gtest/gtest.h>

#include <set>

#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/search/random_walk.h"

namespace kvsim::scenarios::page42_test {
namespace {

const core::room_key request_a{42, 0};
const core::room_key request_b{42, 1};
constexpr core::rank_id decode_rank = 1;

scenario_spec page42() {
  for (const scenario_spec& s : load_catalogue(KVSIM_CATALOGUE)) {
    if (s.name == "page42") return s;
  }
  ADD_FAILURE() << "no page42 in the catalogue";
  return {};
}

struct page42_outcome {
  std::set<core::page_index> a_pages;
  std::set<core::page_index> b_pages;
  std::uint64_t b_allocated_at = 0;
  // Copies of A's transfer into a decode page that B owned at that moment.
  int a_writes_into_b = 0;
  int b_reads = 0;
  int b_reads_intact = 0;
};

page42_outcome run_page42(core::variant v, std::uint64_t seed) {
  sim::random_walk chooser(seed);
  const scenario_spec spec = page42();
  const auto w = make_scenario_world(spec, v, chooser, seed);
  w->run();  // no checkers: the test reads the outcome from the events itself
  page42_outcome out;
  bool b_owns = false;
  for (const sim::sim_event& e : w->world().events()) {
    if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
      if (decided->what.rank != decode_rank) continue;
      if (const auto* allocated = std::get_if<core::pages_allocated>(&decided->what.body)) {
        auto& pages = allocated->owner == request_a ? out.a_pages : out.b_pages;
        pages.insert(allocated->pages.begin(), allocated->pages.end());
        if (allocated->owner == request_b) {
          b_owns = true;
          out.b_allocated_at = e.step;
        }
      }
    } else if (const auto* copied = std::get_if<sim::transfer_page_copied>(&e.body)) {
      if (copied->owner == request_a && b_owns && out.b_pages.contains(copied->destination_page)) {
        ++out.a_writes_into_b;
      }
    } else if (const auto* read = std::get_if<sim::page_read>(&e.body)) {
      if (read->reader == request_b) {
        ++out.b_reads;
        out.b_reads_intact += read->intact ? 1 : 0;
      }
    }
  }
  return out;
}

TEST(Page42, HistoricalCleanupHandsAsHeldPageToBAndAWritesIntoIt) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const page42_outcome out = run_page42(core::variant::with(core::bug::b1_destination_reuse), seed);
    EXPECT_EQ(out.b_pages, out.a_pages) << "LIFO hands B exactly A's freed pages; seed " << seed;
    EXPECT_GE(out.a_writes_into_b, 1) << "A's resumed copy lands in B's page; seed " << seed;
  }
}

TEST(Page42, SafeWithholdsThePagesUntilAsTransferEnded) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const page42_outcome out = run_page42(core::variant::safe(), seed);
    EXPECT_EQ(out.a_writes_into_b, 0) << "seed " << seed;
    EXPECT_EQ(out.b_reads, 2) << "B completes and reads both of its pages; seed " << seed;
    EXPECT_EQ(out.b_reads_intact, 2) << "and finds its own bytes; seed " << seed;
  }
}

}  // namespace
}  // namespace kvsim::scenarios::page42_test
