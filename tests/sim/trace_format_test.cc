// The trace format's constants (spec/trace_format.h) as the simulator writes them: every event
// line starts with the shared prefix and its kind's name from the one table, the decision hash
// of no decisions is the table's basis (what a real-backend recording carries), and actors are
// labelled as the table says.
#include "spec/trace_format.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "sim/actor_name.h"
#include "sim/decision.h"
#include "sim/sim_events.h"

namespace kvsim::sim::trace_format_test {
namespace {

template <std::size_t... I>
void expect_every_kind_named_by_the_table(std::index_sequence<I...>) {
  const std::vector<actor_name> actors{{1, "decode", 0}};
  const auto check = [&](std::size_t index, sim_event_body body) {
    const sim_event e{7, 40, 0, std::move(body)};
    const std::string line = describe(e, actors);
    const std::string expected = "step 7 t=40us r1.decode.0 " + std::string(spec::event_kind_names[index]);
    EXPECT_EQ(line.substr(0, expected.size()), expected) << line;
    // The name is a whole word: the fields follow after a space, or the line ends.
    EXPECT_TRUE(line.size() == expected.size() || line[expected.size()] == ' ') << line;
  };
  (check(I, sim_event_body{std::in_place_index<I>}), ...);
}

TEST(TraceFormat, EveryEventLineStartsWithThePrefixAndItsKindsNameFromTheTable) {
  expect_every_kind_named_by_the_table(
      std::make_index_sequence<std::variant_size_v<sim_event_body>>{});
}

TEST(TraceFormat, EveryEventKindHasANameOfItsOwn) {
  const std::set<std::string_view> names(spec::event_kind_names.begin(),
                                         spec::event_kind_names.end());
  EXPECT_EQ(names.size(), spec::event_kind_names.size());
  EXPECT_EQ(spec::to_string(spec::event_kind::core_decided), "core_decided");
}

TEST(TraceFormat, TheHashOfNoDecisionsIsTheBasisARecordingCarries) {
  EXPECT_EQ(decision_hash({}), spec::decision_hash_basis);
  EXPECT_EQ(spec::hex16(decision_hash({})), "cbf29ce484222325");
  EXPECT_EQ(spec::hex16(0xaULL), "000000000000000a");
}

TEST(TraceFormat, ActorsAreLabelledByRankRoleAndIndex) {
  EXPECT_EQ(to_string(actor_name{3, "prefill", 2}), "r3.prefill.2");
  EXPECT_EQ(spec::actor_label(3, "prefill", 2), "r3.prefill.2");
  EXPECT_EQ(spec::event_line_prefix(12, 40, "world"), "step 12 t=40us world ");
}

}  // namespace
}  // namespace kvsim::sim::trace_format_test
