// Peer death end to end, on the catalogue's peer_death scenario and the production core: with
// `safe` no seed finds anything, and the searches run every mechanism the death needs (decode
// aborts what waits for the dead rank, keeps its pages in a ledger quarantine, counts the rank
// drained only once the transport confirmed the teardown, then confirms the quarantine and
// frees; a deadline passing meanwhile quarantines too). A core that frees on the heartbeat's
// loss alone (the historical B8) is caught by its damage: the dead rank's posted write lands
// in a page the next request of the reused room owns (I1). And on b12_deadline, a transport
// timeout without confirmation is quarantined on prefill and confirmed by the copy's end.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/search/random_walk.h"
#include "tests/support/catalogue_scenarios.h"

namespace kvsim::scenarios::peer_death_test {
namespace {

constexpr core::rank_id decode_rank = 2;  // peer_death: prefill ranks 0 and 1, decode rank 2

using testing::from_catalogue;

struct tally {
  std::map<std::string, std::size_t> seeds_with;  // mechanism -> seeds where it ran
  std::size_t findings = 0;
  std::string first_finding;
};

// Whether each mechanism ran in one run, read from its events.
std::map<std::string, bool> mechanisms(const sim::world& w) {
  std::map<std::string, bool> ran;
  std::set<core::room_key> past_deadline;
  for (const sim::sim_event& e : w.events()) {
    if (std::holds_alternative<sim::rank_stopped>(e.body)) ran["rank stopped"] = true;
    if (std::holds_alternative<sim::transport_torn_down>(e.body)) ran["torn down"] = true;
    const auto* decided = std::get_if<sim::core_decided>(&e.body);
    if (decided == nullptr) continue;
    const core::event_body& body = decided->what.body;
    const bool on_decode = decided->what.rank == decode_rank;
    if (const auto* handled = std::get_if<core::peer_death_handled>(&body)) {
      ran[std::string("peer death ") + core::to_string(handled->action)] = true;
    }
    if (const auto* teardown = std::get_if<core::teardown_counted>(&body)) {
      ran["teardown counted"] = true;
      if (past_deadline.contains(teardown->key)) ran["teardown after the deadline"] = true;
    }
    if (on_decode && std::holds_alternative<core::lease_quarantined>(body)) {
      ran["decode quarantine"] = true;
    }
    if (on_decode && std::holds_alternative<core::quarantine_confirmed>(body)) {
      ran["decode quarantine confirmed"] = true;
    }
    if (const auto* expired = std::get_if<core::deadline_expired>(&body);
        expired && expired->action == core::deadline_action::quarantined) {
      ran["deadline quarantine"] = true;
      past_deadline.insert(expired->key);
    }
    if (!on_decode && std::holds_alternative<core::transfer_unconfirmed>(body)) {
      ran["prefill timeout unconfirmed"] = true;
    }
    if (!on_decode && std::holds_alternative<core::quarantine_confirmed>(body)) {
      ran["prefill quarantine confirmed"] = true;
    }
  }
  return ran;
}

tally search(const scenario_spec& spec, core::variant v, std::uint64_t seeds,
             properties::checker_family family) {
  tally out;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    sim::random_walk chooser(seed);
    const auto w = make_scenario_world(spec, v, chooser, seed);
    properties::checker_set checkers(0, spec.heal_bound_us);
    checkers.attach(w->world(), family);
    w->run();
    if (const auto& found = w->world().found()) {
      if (out.findings++ == 0) out.first_finding = found->invariant + ": " + found->message;
    }
    for (const auto& [name, ran] : mechanisms(w->world())) out.seeds_with[name] += ran ? 1 : 0;
  }
  return out;
}

std::size_t seeds_with(const tally& t, const std::string& mechanism) {
  const auto it = t.seeds_with.find(mechanism);
  return it == t.seeds_with.end() ? 0 : it->second;
}

TEST(PeerDeath, SafeIsCleanAndRunsEveryMechanismOfTheDeath) {
  const tally t = search(from_catalogue("peer_death"), core::variant::safe(), 400,
                         properties::checker_family::all);
  EXPECT_EQ(t.findings, 0u) << t.first_finding;
  for (const char* mechanism :
       {"rank stopped", "torn down", "peer death quarantined", "peer death already_torn_down",
        "teardown counted", "decode quarantine", "decode quarantine confirmed"}) {
    EXPECT_GT(seeds_with(t, mechanism), 0u) << mechanism;
  }
  // Every quarantine decode took was confirmed in the end (I8 would fire otherwise).
  EXPECT_EQ(seeds_with(t, "decode quarantine"), seeds_with(t, "decode quarantine confirmed"));
}

// The client aborts the first request with a short deadline: the deadline passes while the
// dead rank's teardown is pending, and its quarantine is confirmed by the teardown.
TEST(PeerDeath, ADeadlineThatPassesWhileTheTeardownIsPendingQuarantinesUntilIt) {
  scenario_spec spec = from_catalogue("peer_death");
  spec.requests[0].abort = abort_phase::anytime;
  spec.faults.deadline_us = 30;
  const tally t = search(spec, core::variant::safe(), 400, properties::checker_family::all);
  EXPECT_EQ(t.findings, 0u) << t.first_finding;
  EXPECT_GT(seeds_with(t, "teardown after the deadline"), 0u);
  EXPECT_EQ(seeds_with(t, "decode quarantine"), seeds_with(t, "decode quarantine confirmed"));
}

TEST(PeerDeath, ACoreThatFreesOnTheLostHeartbeatIsCaughtByItsDamage) {
  const tally t = search(from_catalogue("peer_death"),
                         core::variant::with(core::bug::b8_local_failure_release), 200,
                         properties::checker_family::damage);
  EXPECT_GT(t.findings, 0u);
  EXPECT_EQ(t.first_finding.rfind("I1: ", 0), 0u) << t.first_finding;
  EXPECT_GT(seeds_with(t, "peer death released"), 0u);
}

TEST(PeerDeath, ATimeoutWithoutConfirmationIsQuarantinedAndConfirmedOnPrefill) {
  const tally t = search(from_catalogue("b12_deadline"), core::variant::safe(), 200,
                         properties::checker_family::all);
  EXPECT_EQ(t.findings, 0u) << t.first_finding;
  EXPECT_GT(seeds_with(t, "prefill timeout unconfirmed"), 0u);
  EXPECT_EQ(seeds_with(t, "prefill timeout unconfirmed"),
            seeds_with(t, "prefill quarantine confirmed"));
}

}  // namespace
}  // namespace kvsim::scenarios::peer_death_test
