// The world's callers outside the core, end to end on the catalogue's room_churn scenario and
// the production core: a careless caller misusing the page ledgers (fault `misuse`) and late
// status writes of a transfer worker (fault `late_status`). With `safe` no seed finds
// anything, and the searches reach every refusal the ledger has and every way the status
// table ignores a late write, which is what lets a broken ledger or table be seen at all.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/search/random_walk.h"

namespace kvsim::scenarios::hostile_callers_test {
namespace {

scenario_spec room_churn() {
  for (const scenario_spec& s : load_catalogue(KVSIM_CATALOGUE)) {
    if (s.name == "room_churn") return s;
  }
  ADD_FAILURE() << "no room_churn in the catalogue";
  return {};
}

TEST(HostileCallers, SafeRefusesEveryCarelessCallAndIgnoresEveryLateWrite) {
  const scenario_spec spec = room_churn();
  ASSERT_TRUE(spec.faults.on(fault_kind::ledger_misuse) && spec.faults.on(fault_kind::late_status));
  std::set<std::string> refusals;  // ledger errors the careless caller was answered with
  std::set<std::string> accepted;  // calls the ledger accepted (only a harmless release_all)
  std::set<std::string> ignored;   // why the table ignored a write
  std::set<std::string> table_refusals;  // the room table's answers to careless calls
  std::set<std::string> calls_ignored;   // engine-facing calls the core ignored
  std::size_t findings = 0;
  std::string first_finding;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    sim::random_walk chooser(seed);
    const auto w = make_scenario_world(spec, core::variant::safe(), chooser, seed);
    properties::checker_set checkers(0, spec.heal_bound_us);
    checkers.attach(w->world());
    w->run();
    if (const auto& found = w->world().found(); found && findings++ == 0) {
      first_finding = "seed " + std::to_string(seed) + ": " + found->message;
    }
    const sim::misuse_attempted* call = nullptr;
    for (const sim::sim_event& e : w->world().events()) {
      if (const auto* attempt = std::get_if<sim::misuse_attempted>(&e.body)) call = attempt;
      if (const auto* answer = std::get_if<sim::misuse_answered>(&e.body)) {
        if (answer->error) {
          refusals.insert(core::to_string(*answer->error));
        } else if (call != nullptr) {
          accepted.insert(sim::to_string(call->call));
        }
      }
      if (const auto* answer = std::get_if<sim::lifetime_misuse_answered>(&e.body)) {
        table_refusals.insert(answer->error ? core::to_string(*answer->error) : "accepted");
      }
      if (const auto* attempt = std::get_if<sim::ignored_call_attempted>(&e.body)) {
        calls_ignored.insert(sim::to_string(attempt->call));
      }
      const auto* decided = std::get_if<sim::core_decided>(&e.body);
      if (decided == nullptr) continue;
      if (const auto* skip = std::get_if<core::status_update_ignored>(&decided->what.body)) {
        ignored.insert(core::to_string(skip->reason));
      }
    }
  }
  EXPECT_EQ(findings, 0u) << first_finding;
  // Every refusal but lease_quarantined (room_churn quarantines no lease: nothing times out
  // unconfirmed and no peer dies there).
  const std::set<std::string> every_refusal{
      "empty_request",  "page_out_of_range", "duplicate_page",  "page_not_owned",
      "not_owner",      "double_release",    "page_retiring",   "unknown_lease",
      "lease_underflow", "lease_not_quarantined"};
  EXPECT_EQ(refusals, every_refusal);
  EXPECT_EQ(accepted, std::set<std::string>{"release_all"})
      << "only a room that holds nothing releasing all of it is accepted";
  for (const char* reason : {"terminal", "regression", "unchanged", "failed_for_absent_room"}) {
    EXPECT_TRUE(ignored.contains(reason)) << reason;
  }
  // The room table refuses every careless call for each of its reasons (and accepts none).
  EXPECT_EQ(table_refusals, (std::set<std::string>{"unknown_room", "already_open", "tombstoned",
                                                   "room_closed", "lease_underflow",
                                                   "leases_pending"}));
  // Every call to ignore was made (and, with no finding, ignored).
  EXPECT_EQ(calls_ignored.size(), 9u);
}

}  // namespace
}  // namespace kvsim::scenarios::hostile_callers_test
