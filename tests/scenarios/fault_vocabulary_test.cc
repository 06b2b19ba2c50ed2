// The fault vocabulary is declared once (spec/fault_kinds.h): every reader of a kind takes it
// from the table, and these tests fail when one misses a kind. A kind added to the table is
// then parsed, written, drawn into profiles, printed, read back from traces and documented in
// SCHEMA.md, or one of these says which reader left it out.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/fault_profile.h"
#include "sim/trace.h"
#include "spec/fault_kinds.h"

namespace kvsim::scenarios::fault_vocabulary_test {
namespace {

using spec::fault_kind_row;
using spec::fault_kinds;

TEST(FaultVocabulary, NamesAndKeysAreUniqueAndFoundAgain) {
  std::set<std::string_view> trace_names;
  std::set<std::string_view> scenario_keys;
  for (const fault_kind_row& row : fault_kinds) {
    EXPECT_FALSE(row.trace_name.empty());
    EXPECT_FALSE(row.summary.empty()) << row.trace_name;
    EXPECT_NE(row.worlds, 0) << row.trace_name << " is honoured by no world";
    EXPECT_TRUE(trace_names.insert(row.trace_name).second) << row.trace_name << " twice";
    EXPECT_EQ(spec::fault_kind_from_trace_name(row.trace_name), row.kind);
    EXPECT_STREQ(spec::to_string(row.kind), std::string(row.trace_name).c_str());
    if (row.scenario_key.empty()) continue;
    EXPECT_TRUE(scenario_keys.insert(row.scenario_key).second) << row.scenario_key << " twice";
    EXPECT_EQ(spec::fault_kind_from_scenario_key(row.scenario_key), row.kind);
  }
  EXPECT_EQ(spec::fault_kind_from_trace_name("nope"), std::nullopt);
  EXPECT_EQ(spec::fault_kind_from_scenario_key(""), std::nullopt);
}

// A scenario of a world that honours the kind, with the kind on and nothing else.
scenario_spec with_only(const fault_kind_row& row) {
  for (scenario_spec s : load_catalogue(KVSIM_CATALOGUE)) {
    const bool transfer = s.kind == scenario_kind::transfer;
    if ((row.worlds & (transfer ? spec::transfer_world : spec::prefetch_world)) == 0) continue;
    s.faults.allowed = {};
    s.faults.set(row.kind, true);
    return s;
  }
  ADD_FAILURE() << "no catalogue scenario of a world that honours " << row.trace_name;
  return {};
}

TEST(FaultVocabulary, EverySwitchIsParsedWrittenAndAllowed) {
  for (const fault_kind_row& row : fault_kinds) {
    if (row.scenario_key.empty()) continue;
    const scenario_spec s = with_only(row);
    const nlohmann::json written = to_json(s);
    const std::string key(row.scenario_key);
    ASSERT_TRUE(written.at("faults").contains(key)) << key << " not written";
    EXPECT_EQ(written.at("faults").at(key), true) << key;
    const scenario_spec read = parse_scenario(written, "test");
    EXPECT_TRUE(read.faults.on(row.kind)) << key << " not parsed";
    EXPECT_EQ(read, s) << key;
    const std::uint32_t allowed = allowed_faults(s);
    EXPECT_NE(allowed & (1u << static_cast<unsigned>(row.kind)), 0u) << key << " not allowed in runs";
    // Only this kind (and the scenario's own abort timing) is allowed.
    const std::uint32_t others = allowed & ~(1u << static_cast<unsigned>(row.kind)) &
                                 ~(1u << static_cast<unsigned>(spec::fault_kind::abort));
    EXPECT_EQ(others, 0u) << key;
  }
}

// A world that does not honour a kind refuses it: a switch that would do nothing there.
TEST(FaultVocabulary, AWorldRefusesTheKindsItDoesNotHonour) {
  for (const fault_kind_row& row : fault_kinds) {
    if (row.scenario_key.empty()) continue;
    for (scenario_spec s : load_catalogue(KVSIM_CATALOGUE)) {
      const bool transfer = s.kind == scenario_kind::transfer;
      if ((row.worlds & (transfer ? spec::transfer_world : spec::prefetch_world)) != 0) continue;
      s.faults.set(row.kind, true);
      EXPECT_THROW(parse_scenario(to_json(s), "test"), catalogue_error) << row.scenario_key;
      break;
    }
  }
}

TEST(FaultVocabulary, EveryKindIsDrawnPrintedAndReadBackByName) {
  for (const fault_kind_row& row : fault_kinds) {
    const std::uint32_t only = 1u << static_cast<unsigned>(row.kind);
    bool drawn_on = false;
    for (std::uint64_t seed = 1; seed <= 64 && !drawn_on; ++seed) {
      drawn_on = sim::fault_profile::draw(seed, only).of(row.kind) != 0;
    }
    EXPECT_TRUE(drawn_on) << row.trace_name << " never drawn on";
    sim::fault_profile profile;
    profile.set(row.kind, 200'000);
    EXPECT_NE(profile.describe().find(std::string(row.trace_name) + "=20%"), std::string::npos)
        << profile.describe();
    EXPECT_EQ(sim::fault_kind_from_string(row.trace_name), row.kind);
  }
}

// A kind added later (traced_when_off false) is named in a trace only when on, so the trace of
// every run without it stays byte for byte as it was; a kind traces have always named is
// named when off too.
TEST(FaultVocabulary, AKindAddedLaterIsNamedInATraceOnlyWhenOn) {
  fault_kind_row later = fault_kinds.back();
  later.in_first_traces = false;
  later.traced_when_off = false;
  EXPECT_FALSE(named_in_trace(later, 0));
  EXPECT_TRUE(named_in_trace(later, 1));
  later.traced_when_off = true;
  EXPECT_TRUE(named_in_trace(later, 0));
}

// The simulator's trace writes its fault_profile by that rule, for every kind.
TEST(FaultVocabulary, ATraceNamesAKindWhenOnAndWhenOffOnlyIfTracesAlwaysHave) {
  for (const fault_kind_row& row : fault_kinds) {
    const std::string name(row.trace_name);
    sim::trace t;
    t.kvsim_version = "test";
    t.scenario = nlohmann::json::object();
    EXPECT_EQ(sim::to_json(t)["fault_profile"].contains(name), named_in_trace(row, 0)) << name;
    t.faults.set(row.kind, 200'000);
    const nlohmann::json on = sim::to_json(t)["fault_profile"];
    ASSERT_TRUE(on.contains(name)) << name;
    EXPECT_EQ(on[name], 200'000) << name;
  }
}

// SCHEMA.md's faults table has a row for every switch, and no switch the table does not know.
TEST(FaultVocabulary, TheSchemaDocumentsEverySwitch) {
  std::ifstream in(KVSIM_SCHEMA);
  ASSERT_TRUE(in) << KVSIM_SCHEMA;
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::size_t table = text.find("### `faults`");
  ASSERT_NE(table, std::string::npos);
  const std::string section = text.substr(table, text.find("\n\n", text.find("| field", table)) - table);
  std::set<std::string> documented;
  for (std::size_t at = section.find("\n| `"); at != std::string::npos; at = section.find("\n| `", at + 1)) {
    const std::size_t from = at + 4;
    documented.insert(section.substr(from, section.find('`', from) - from));
  }
  std::set<std::string> expected{"gates", "deadline_us", "prefetch_states"};
  for (const fault_kind_row& row : fault_kinds) {
    if (!row.scenario_key.empty()) expected.insert(std::string(row.scenario_key));
  }
  EXPECT_EQ(documented, expected);
}

}  // namespace
}  // namespace kvsim::scenarios::fault_vocabulary_test
