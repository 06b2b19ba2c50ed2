// Bad catalogues: every kind of problem is refused with a catalogue_error of that kind and ONE
// line naming the file, the scenario and the field. Nothing else ever escapes, whatever the
// damage (catalogue_damage_test.cc truncates and mutates the shipped catalogue everywhere).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "spec/catalogue.h"
#include "spec/scenario_caps.h"
#include "spec/untrusted_json.h"

namespace kvsim::scenarios::catalogue_errors_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using problem = catalogue_problem;

// A small valid catalogue: a transfer scenario (page42) and a prefetch scenario (hicache).
json valid_document() {
  return json::parse(R"({
    "format": "kvsim-catalogue", "version": 1,
    "scenarios": [
      {"name": "page42", "description": "B1 as in the seed", "kind": "transfer",
       "topology": {"prefill_ranks": 1, "decode_ranks": 2, "pages_per_rank": 8, "page_bytes": 64},
       "requests": [{"room": 42, "pages": 2, "abort": "during_transfer", "abort_from": [0]},
                    {"room": 42, "pages": 2, "after": 0}],
       "faults": {"gates": [{"request": 0, "before_page": 1}], "deadline_us": 500},
       "expect": {"breaking_variant": "B1", "invariant": "I1"}},
      {"name": "hicache", "kind": "prefetch",
       "topology": {"attention_group": 2},
       "requests": [{"room": 20, "abort": "during_transfer"}],
       "faults": {"prefetch_states": ["missing", "active"]},
       "expect": {"breaking_variant": "H1", "invariant": "I5"}}
    ]})");
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One edit of the valid document: set the value at a JSON pointer, or remove it.
struct edit {
  std::string pointer;
  json value;
  bool remove = false;
};
edit put(std::string pointer, json value) { return {std::move(pointer), std::move(value)}; }
edit drop(std::string pointer) { return {std::move(pointer), nullptr, true}; }

json edited(const edit& e) {
  json document = valid_document();
  const json::json_pointer pointer(e.pointer);
  if (e.remove) {
    document.at(pointer.parent_pointer()).erase(pointer.back());
  } else {
    document[pointer] = e.value;
  }
  return document;
}

// A bad edit and what its one line says; `kind` for the tables that mix kinds.
struct bad {
  edit change;
  std::string message;
  problem kind = problem::out_of_range;
};

class CatalogueErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    // Per test and process: ctest runs the tests of this binary in parallel processes.
    dir = fs::temp_directory_path() /
          ("kvsim_catalogue_test_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  fs::path write(const std::string& bytes) {
    const fs::path path = dir / "catalogue.json";
    fs::remove(path);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // Loading `path` fails with `kind`, in one line that starts with the file and contains every
  // piece of `expected` (the scenario, the field, what is wrong).
  static void expect_error(const fs::path& path, problem kind,
                           const std::vector<std::string>& expected) {
    try {
      load_catalogue(path);
      ADD_FAILURE() << "loading did not throw; expected " << to_string(kind);
    } catch (const catalogue_error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.problem(), kind) << to_string(e.problem()) << ": " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
      for (const auto& piece : expected) {
        EXPECT_NE(message.find(piece), std::string::npos)
            << "message: " << message << "\nexpected to contain: " << piece;
      }
    }
  }

  void expect_error(const std::string& bytes, problem kind,
                    const std::vector<std::string>& expected) {
    expect_error(write(bytes), kind, expected);
  }

  void expect_error(const edit& e, problem kind, const std::vector<std::string>& expected) {
    SCOPED_TRACE(e.pointer + (e.remove ? " removed" : " = " + e.value.dump()));
    expect_error(edited(e).dump(1), kind, expected);
  }

  fs::path dir;
};

// --- the file and the document ------------------------------------------------------------

TEST_F(CatalogueErrors, AMissingFileIsNamed) {
  expect_error(dir / "no_such.json", problem::unreadable_file, {"no such catalogue file"});
}

TEST_F(CatalogueErrors, AnUnreadableFileIsNamed) {
  expect_error(dir, problem::unreadable_file, {"is a directory"});
  if (::geteuid() != 0) {  // root reads anything
    const fs::path path = write(valid_document().dump());
    fs::permissions(path, fs::perms::none);
    expect_error(path, problem::unreadable_file, {"cannot open catalogue: Permission denied"});
  }
}

TEST_F(CatalogueErrors, MalformedOrTruncatedJsonNamesTheByte) {
  expect_error(std::string(""), problem::malformed_json, {"empty file"});
  expect_error(std::string("{\"format\": }"), problem::malformed_json,
               {"malformed or truncated JSON at byte 12 ("});
  const std::string text = valid_document().dump(1);
  for (const std::size_t cut : {text.size() / 3, text.size() / 2, text.size() - 1}) {
    expect_error(text.substr(0, cut), problem::malformed_json,
                 {"malformed or truncated JSON at byte "});
  }
}

TEST_F(CatalogueErrors, AKeyTwiceInOneObjectIsRefused) {
  std::string text = valid_document().dump();
  text.insert(text.find("\"room\":42"), "\"pages\":3,");  // requests[0] says "pages" twice
  expect_error(text, problem::duplicate_key,
               {"field 'scenarios[0].requests[0].pages' appears twice in one object"});
}

TEST_F(CatalogueErrors, ADocumentWithoutTheCatalogueFormatTagIsRefused) {
  expect_error(put("/format", "kvsim-trace"), problem::wrong_format,
               {"not a kvsim catalogue (field 'format' is \"kvsim-trace\", expected "
                "\"kvsim-catalogue\")"});
  expect_error(put("/format", 1), problem::wrong_format, {"field 'format' is 1"});
  expect_error(drop("/format"), problem::wrong_format, {"no field 'format'"});
  expect_error(std::string("[1, 2]"), problem::wrong_format,
               {"not a kvsim catalogue (the JSON is array, not an object)"});
}

TEST_F(CatalogueErrors, ANewerFormatVersionIsRefused) {
  expect_error(put("/version", 2), problem::newer_version,
               {"catalogue format version 2 is newer than this kvsim reads (1)"});
  // Not newer, just wrong:
  expect_error(put("/version", 0), problem::out_of_range,
               {"field 'version' must be an integer >= 1"});
  expect_error(put("/version", "1"), problem::wrong_type, {"field 'version'"});
}

// --- fields -----------------------------------------------------------------------------------

TEST_F(CatalogueErrors, AMissingRequiredFieldIsNamed) {
  expect_error(drop("/scenarios/0/name"), problem::missing_field,
               {": scenarios[0]: missing required field 'name'"});
  for (const char* field : {"kind", "topology", "requests", "expect"}) {
    expect_error(drop(std::string("/scenarios/0/") + field), problem::missing_field,
                 {"scenario 'page42': missing required field '" + std::string(field) + "'"});
  }
  const std::vector<std::pair<std::string, std::string>> nested = {
      {"/scenarios/0/expect/breaking_variant", "expect.breaking_variant"},
      {"/scenarios/0/expect/invariant", "expect.invariant"},
      {"/scenarios/0/requests/1/room", "requests[1].room"},
      {"/scenarios/0/faults/gates/0/request", "faults.gates[0].request"},
      {"/scenarios/0/faults/gates/0/before_page", "faults.gates[0].before_page"},
      {"/scenarios/1/faults/prefetch_states", "faults.prefetch_states"},
  };
  for (const auto& [pointer, field] : nested) {
    expect_error(drop(pointer), problem::missing_field, {"missing required field '" + field + "'"});
  }
  expect_error(drop("/scenarios"), problem::missing_field, {"missing required field 'scenarios'"});
  expect_error(drop("/version"), problem::missing_field, {"missing required field 'version'"});
}

TEST_F(CatalogueErrors, AValueOfTheWrongTypeIsNamed) {
  const std::vector<bad> table = {
      {put("/scenarios/0/topology/prefill_ranks", "2"),
       "field 'topology.prefill_ranks' must be an integer between 1 and 64 (got \"2\")"},
      {put("/scenarios/0/requests/0/pages", 1.5),
       "field 'requests[0].pages' must be an integer >= 1 (got 1.5)"},
      {put("/scenarios/0/requests/0/room", true), "field 'requests[0].room' must be an integer"},
      {put("/scenarios/0/topology", json::array()), "field 'topology' must be an object (got [])"},
      {put("/scenarios/0/requests", json::object()), "field 'requests' must be an array (got {})"},
      {put("/scenarios/0/requests/0", 3), "field 'requests[0]' must be an object (got 3)"},
      {put("/scenarios/0/requests/0/abort_from", 0),
       "field 'requests[0].abort_from' must be an array"},
      {put("/scenarios/0/faults/message_delay", "yes"),
       "field 'faults.message_delay' must be true or false (got \"yes\")"},
      {put("/scenarios/0/faults", json::array()), "field 'faults' must be an object"},
      {put("/scenarios/0/kind", 0), "field 'kind' must be one of 'transfer', 'prefetch' (got 0)"},
      {put("/scenarios/0/expect/invariant", 1), "field 'expect.invariant' must be a string"},
      {put("/scenarios/0/description", json::array({"two", "lines"})),
       "field 'description' must be a string"},
      {put("/scenarios/0/step_limit", nullptr),
       "field 'step_limit' must be an integer between 1 and 200000 (got null)"},
  };
  for (const auto& b : table) {
    expect_error(b.change, problem::wrong_type, {"scenario 'page42': " + b.message});
  }
  expect_error(put("/scenarios/0/name", 5), problem::wrong_type,
               {"scenarios[0]: field 'name' must be a string (got 5)"});
  expect_error(put("/scenarios/1", "hicache"), problem::wrong_type,
               {"scenarios[1]: a scenario must be a JSON object"});
  expect_error(put("/scenarios", json::object()), problem::wrong_type,
               {"field 'scenarios' must be an array"});
}

TEST_F(CatalogueErrors, ANumberOutOfItsRangeIsNamed) {
  const std::vector<bad> table = {
      {put("/scenarios/0/topology/prefill_ranks", -1),
       "field 'topology.prefill_ranks' must be an integer between 1 and 64 (got -1)"},
      {put("/scenarios/0/topology/decode_ranks", 0),
       "field 'topology.decode_ranks' must be an integer between 1 and 64 (got 0)"},
      {put("/scenarios/0/topology/pages_per_rank", 0),
       "field 'topology.pages_per_rank' must be an integer between 1 and 512 (got 0)"},
      {put("/scenarios/0/topology/page_bytes", 16),
       "field 'topology.page_bytes' must be an integer between 17 and 1048576 (got 16)"},
      {put("/scenarios/0/topology/attention_group", 0),
       "field 'topology.attention_group' must be an integer between 1 and 64 (got 0)"},
      {put("/scenarios/0/topology/prefill_ranks", 4294967296ULL),
       "field 'topology.prefill_ranks' must be an integer between 1 and 64 (got 4294967296)"},
      {put("/scenarios/0/topology/tombstones", 4294967296ULL),
       "field 'topology.tombstones' must be an integer between 1 and 4294967295 (got 4294967296)"},
      {put("/scenarios/0/requests/0/pages", 0),
       "field 'requests[0].pages' must be an integer >= 1 (got 0)"},
      {put("/scenarios/0/requests/0/pages", 9),
       "field 'requests[0].pages' must be at most topology.pages_per_rank = 8 (got 9)"},
      {put("/scenarios/0/topology/pages_per_rank", 1),
       "field 'requests[0].pages' must be at most topology.pages_per_rank = 1 (got 2)"},
      {put("/scenarios/0/requests/0/chunks", 0),
       "field 'requests[0].chunks' must be an integer >= 1 (got 0)"},
      {put("/scenarios/0/requests/0/chunks", 3),
       "field 'requests[0].chunks' must be at most requests[0].pages = 2 (got 3)"},
      {put("/scenarios/0/requests/0/siblings", 0),
       "field 'requests[0].siblings' must be an integer between 1 and 64 (got 0)"},
      {put("/scenarios/0/requests/0/room", -7),
       "field 'requests[0].room' must be an integer >= 0 (got -7)"},
      {put("/scenarios/0/requests", json::array()),
       "field 'requests' must list at least one request"},
      {put("/scenarios/0/faults/deadline_us", 0),
       "field 'faults.deadline_us' must be an integer >= 1 (got 0)"},
      {put("/scenarios/0/step_limit", 0),
       "field 'step_limit' must be an integer between 1 and 200000 (got 0)"},
      {put("/scenarios/0/heal_bound_us", -5), "field 'heal_bound_us' must be an integer >= 1"},
  };
  for (const auto& b : table) {
    expect_error(b.change, problem::out_of_range, {"scenario 'page42': " + b.message});
  }
  // The exact line of the schema's example.
  expect_error(put("/scenarios/0/topology/prefill_ranks", -1), problem::out_of_range,
               {"catalogue.json: scenario 'page42': field 'topology.prefill_ranks' must be an "
                "integer between 1 and 64 (got -1)"});
}

TEST_F(CatalogueErrors, AfterMustNameAnEarlierRequest) {
  expect_error(put("/scenarios/0/requests/1/after", 1), problem::out_of_range,
               {"scenario 'page42': field 'requests[1].after' must name an earlier request, an "
                "index below 1 (got 1)"});
  expect_error(put("/scenarios/0/requests/1/after", 5), problem::out_of_range,
               {"field 'requests[1].after'", "(got 5)"});
  expect_error(put("/scenarios/0/requests/0/after", 0), problem::out_of_range,
               {"field 'requests[0].after' must name an earlier request, and requests[0] is the "
                "first (got 0)"});
}

TEST_F(CatalogueErrors, AbortFromMustNameDecodeRanksOnce) {
  expect_error(put("/scenarios/0/requests/0/abort_from", json::array({0, 2})),
               problem::out_of_range,
               {"scenario 'page42': field 'requests[0].abort_from[1]' must be a decode rank, below "
                "topology.decode_ranks = 2 (got 2)"});
  expect_error(put("/scenarios/0/requests/0/abort_from", json::array({1, 1})),
               problem::inconsistent, {"field 'requests[0].abort_from' lists decode rank 1 twice"});
}

TEST_F(CatalogueErrors, AGateMustNameARequestAndOneOfItsPages) {
  expect_error(put("/scenarios/0/faults/gates/0/request", 2), problem::out_of_range,
               {"scenario 'page42': field 'faults.gates[0].request' must name a request, an index "
                "below 2 (got 2)"});
  expect_error(put("/scenarios/0/faults/gates/0/before_page", 2), problem::out_of_range,
               {"scenario 'page42': field 'faults.gates[0].before_page' must be below "
                "requests[0].pages = 2 (got 2)"});
}

TEST_F(CatalogueErrors, TransferOnlyFaultsAreRefusedOnAPrefetchScenario) {
  for (const char* fault : {"peer_death", "ledger_misuse", "late_status"}) {
    expect_error(put(std::string("/scenarios/1/faults/") + fault, true), problem::inconsistent,
                 {std::string("scenario 'hicache': field 'faults.") + fault +
                  "' belongs to transfer scenarios only (kind is 'prefetch')"});
  }
}

TEST_F(CatalogueErrors, AnUnknownNameOfAnEnumIsNamed) {
  expect_error(put("/scenarios/0/kind", "transfers"), problem::unknown_value,
               {"scenario 'page42': field 'kind' must be one of 'transfer', 'prefetch' (got "
                "\"transfers\")"});
  expect_error(put("/scenarios/0/requests/0/abort", "during"), problem::unknown_value,
               {"field 'requests[0].abort' must be one of 'before_open', 'before_transfer', "
                "'during_transfer', 'after_transfer', 'anytime', 'before_admission' (got \"during\")"});
  expect_error(put("/scenarios/0/requests/0/origin", "router"), problem::unknown_value,
               {"field 'requests[0].origin' must be one of 'decode', 'prefill' (got \"router\")"});
  expect_error(put("/scenarios/0/topology/allocation", "random"), problem::unknown_value,
               {"field 'topology.allocation' must be one of 'lifo', 'fifo' (got \"random\")"});
  expect_error(put("/scenarios/0/topology/link_keys", "per_rank"), problem::unknown_value,
               {"field 'topology.link_keys' must be one of 'per_life', 'per_pair' (got "
                "\"per_rank\")"});
  expect_error(put("/scenarios/1/faults/prefetch_states/1", "running"), problem::unknown_value,
               {"scenario 'hicache': field 'faults.prefetch_states[1]' must be one of 'missing', "
                "'pending', 'active' (got \"running\")"});
  // A rule is not damage: expect.damage names only what checkers of damage report.
  expect_error(put("/scenarios/0/expect/damage", "I3"), problem::unknown_value,
               {"scenario 'page42': field 'expect.damage' must be a damage invariant: I1, I5, I6, "
                "I7, I8 or I9 (got \"I3\")"});
}

TEST_F(CatalogueErrors, AnUnknownFieldAnywhereIsRefused) {
  std::string text = valid_document().dump();
  text.replace(text.find("\"topology\""), 10, "\"topolgy\"");
  expect_error(text, problem::unknown_field,
               {"scenario 'page42': unknown field 'topolgy' (did you mean 'topology'?)"});
  text = valid_document().dump();
  text.replace(text.find("\"name\":\"page42\""), 6, "\"nmae\"");
  expect_error(text, problem::unknown_field,
               {"scenarios[0]: unknown field 'nmae' (did you mean 'name'?)"});
  const std::vector<std::pair<std::string, std::string>> table = {
      {"/comment", "unknown field 'comment'"},
      {"/scenarios/0/variant", "scenario 'page42': unknown field 'variant'"},
      {"/scenarios/0/topology/prefil_ranks",
       "unknown field 'topology.prefil_ranks' (did you mean 'topology.prefill_ranks'?)"},
      {"/scenarios/0/requests/1/aborted",
       "unknown field 'requests[1].aborted' (did you mean 'requests[1].abort'?)"},
      {"/scenarios/0/faults/message_dup", "unknown field 'faults.message_dup'"},
      {"/scenarios/0/faults/gates/0/page", "unknown field 'faults.gates[0].page'"},
      {"/scenarios/1/expect/variant", "scenario 'hicache': unknown field 'expect.variant'"},
  };
  for (const auto& [pointer, message] : table) {
    expect_error(put(pointer, 1), problem::unknown_field, {message});
  }
}

TEST_F(CatalogueErrors, TwoScenariosWithOneNameAreRefused) {
  expect_error(put("/scenarios/1/name", "page42"), problem::duplicate_name,
               {"scenario 'page42': field 'scenarios[1].name' repeats the name of scenarios[0]"});
}

TEST_F(CatalogueErrors, PrefetchStatesMustGiveOneStatePerRankOfTheGroup) {
  expect_error(put("/scenarios/1/faults/prefetch_states", json::array({"active"})),
               problem::inconsistent,
               {"scenario 'hicache': field 'faults.prefetch_states' must give one state per rank "
                "of topology.attention_group = 2 (got 1)"});
  expect_error(put("/scenarios/1/topology/attention_group", 3), problem::inconsistent,
               {"topology.attention_group = 3 (got 2)"});
  expect_error(put("/scenarios/0/faults/prefetch_states", json::array({"active"})),
               problem::inconsistent,
               {"scenario 'page42': field 'faults.prefetch_states' belongs to prefetch scenarios "
                "only (kind is 'transfer')"});
}

TEST_F(CatalogueErrors, TheBreakingVariantMustBeABugOfDomainMdOrCanary) {
  for (const char* name : {"B99", "b1", "safe", "H0", ""}) {
    expect_error(put("/scenarios/0/expect/breaking_variant", name), problem::unknown_value,
                 {"scenario 'page42': field 'expect.breaking_variant' must be a bug of DOMAIN.md "
                  "(B1 to B12, H1 to H3) or 'canary' (got \"" +
                  std::string(name) + "\")"});
  }
  // A known bug of the other kind of scenario is a contradiction, not a typo.
  expect_error(put("/scenarios/0/expect/breaking_variant", "H2"), problem::inconsistent,
               {"field 'expect.breaking_variant' H2 is a prefetch bug, but kind is 'transfer'"});
  expect_error(put("/scenarios/1/expect/breaking_variant", "B1"), problem::inconsistent,
               {"field 'expect.breaking_variant' B1 is a transfer bug, but kind is 'prefetch'"});
}

TEST_F(CatalogueErrors, ExpectProbesMustNameRealProbesOnce) {
  expect_error(put("/scenarios/0/expect_probes", json::array({"deferred_release", "no_such"})),
               problem::unknown_value,
               {"scenario 'page42': field 'expect_probes[1]' must be a code probe "
                "(docs/probes.md; got \"no_such\")"});
  expect_error(put("/scenarios/0/expect_probes", json::array({"abort_mid_copy", "abort_mid_copy"})),
               problem::inconsistent,
               {"scenario 'page42': field 'expect_probes[1]' names abort_mid_copy twice"});
  expect_error(put("/scenarios/0/expect_probes", "abort_mid_copy"), problem::wrong_type,
               {"scenario 'page42': field 'expect_probes' must be an array"});
}

TEST_F(CatalogueErrors, ExpectAlsoListsFurtherVariantsEachOnce) {
  const json b11 = {{"breaking_variant", "B11"}, {"invariant", "I3"}};
  expect_error(put("/scenarios/0/expect/also",
                   json::array({{{"breaking_variant", "B1"}, {"invariant", "I3"}}})),
               problem::inconsistent,
               {"scenario 'page42': field 'expect.also[0].breaking_variant' repeats B1, already an "
                "expected breaking variant of this scenario"});
  expect_error(put("/scenarios/0/expect/also", json::array({b11, b11})), problem::inconsistent,
               {"field 'expect.also[1].breaking_variant' repeats B11"});
  expect_error(
      put("/scenarios/0/expect/also",
          json::array({{{"breaking_variant", "H1"}, {"invariant", "I5"}}})),
      problem::inconsistent,
      {"field 'expect.also[0].breaking_variant' H1 is a prefetch bug, but kind is 'transfer'"});
  expect_error(
      put("/scenarios/0/expect/also",
          json::array(
              {{{"breaking_variant", "B11"}, {"invariant", "I3"}, {"also", json::array()}}})),
      problem::unknown_field, {"unknown field 'expect.also[0].also'"});
}

TEST_F(CatalogueErrors, TheInvariantMustBeOneOfI1ToI9) {
  for (const char* name : {"I0", "I10", "i1", "I", "1"}) {
    expect_error(put("/scenarios/1/expect/invariant", name), problem::unknown_value,
                 {"scenario 'hicache': field 'expect.invariant' must be an invariant of DOMAIN.md, "
                  "I1 to I9 (got \"" +
                  std::string(name) + "\")"});
  }
}

TEST_F(CatalogueErrors, NamesAndDescriptionsMustBeUsableOnOneLine) {
  expect_error(put("/scenarios/0/name", "page 42"), problem::invalid_text,
               {"scenarios[0]: field 'name' must be 1 to 64 characters from [A-Za-z0-9_.-] (got "
                "\"page 42\")"});
  expect_error(put("/scenarios/0/name", ""), problem::invalid_text, {"scenarios[0]: field 'name'"});
  expect_error(put("/scenarios/0/name", std::string(65, 'a')), problem::invalid_text,
               {"scenarios[0]: field 'name'"});
  expect_error(put("/scenarios/0/description", "two\nlines"), problem::invalid_text,
               {"scenario 'page42': field 'description' must be one line"});
}

TEST_F(CatalogueErrors, AbortDetailsOnARequestThatIsNotAbortedAreInconsistent) {
  expect_error(put("/scenarios/0/requests/1/abort_from", json::array({0})), problem::inconsistent,
               {"field 'requests[1].abort_from' is given but the request has no 'abort'"});
  expect_error(put("/scenarios/0/requests/1/origin", "prefill"), problem::inconsistent,
               {"field 'requests[1].origin' is given but the request has no 'abort'"});
  expect_error(put("/scenarios/0/requests/0/origin", "prefill"), problem::inconsistent,
               {"field 'requests[0].abort_from' names decode ranks that abort, but origin "
                "'prefill'"});
}

// A request that never reaches prefill ends only through its ABORTs: one from every decode rank.
TEST_F(CatalogueErrors, ARequestAbortedBeforeAdmissionIsAbortedByEveryDecodeRank) {
  // page42's requests[0] names the decode rank that aborts it.
  expect_error(put("/scenarios/0/requests/0/abort", "before_admission"), problem::inconsistent,
               {"field 'requests[0].abort' is 'before_admission', which every decode rank aborts: "
                "'origin' must be 'decode' and 'abort_from' empty"});
}

// --- pinned timelines (requests[i].pin) -----------------------------------------------------

TEST_F(CatalogueErrors, PinnedDecodePagesArePagesOfThePoolOneEachAsManyAsTheRequestHas) {
  expect_error(put("/scenarios/0/requests/1/pin", json{{"decode_pages", {1, 8}}}),
               problem::out_of_range,
               {"scenario 'page42': field 'requests[1].pin.decode_pages[1]' must be a page of the "
                "pool, below topology.pages_per_rank = 8 (got 8)"});
  expect_error(put("/scenarios/0/requests/1/pin", json{{"decode_pages", {1, -1}}}),
               problem::out_of_range, {"field 'requests[1].pin.decode_pages[1]' must be an integer"});
  expect_error(put("/scenarios/0/requests/1/pin", json{{"decode_pages", {1}}}),
               problem::inconsistent,
               {"scenario 'page42': field 'requests[1].pin.decode_pages' lists 1 page(s), but the "
                "request has pages = 2: decode allocates exactly the pages pinned"});
  expect_error(put("/scenarios/0/requests/1/pin", json{{"decode_pages", json::array()}}),
               problem::inconsistent, {"field 'requests[1].pin.decode_pages' lists 0 page(s)"});
  expect_error(put("/scenarios/0/requests/1/pin", json{{"decode_pages", {3, 3}}}),
               problem::inconsistent, {"field 'requests[1].pin.decode_pages' names page 3 twice"});
  expect_error(put("/scenarios/0/requests/1/pin", json{{"decode_pages", "3"}}),
               problem::wrong_type, {"field 'requests[1].pin.decode_pages' must be an array"});
}

TEST_F(CatalogueErrors, APinIsAnObjectOfKnownFieldsThatPinsSomething) {
  expect_error(put("/scenarios/0/requests/1/pin", json::array({5, 6})), problem::wrong_type,
               {"field 'requests[1].pin' must be an object"});
  expect_error(put("/scenarios/0/requests/1/pin", json::object()), problem::inconsistent,
               {"field 'requests[1].pin' pins nothing: give decode_pages, submit_at_us or "
                "abort_at_us"});
  expect_error(put("/scenarios/0/requests/1/pin", json{{"decode_page", {5, 6}}}),
               problem::unknown_field,
               {"unknown field 'requests[1].pin.decode_page' (did you mean "
                "'requests[1].pin.decode_pages'?)"});
  expect_error(put("/scenarios/0/requests/1/pin", json{{"submit_at_us", "5"}}), problem::wrong_type,
               {"field 'requests[1].pin.submit_at_us' must be an integer"});
  expect_error(put("/scenarios/0/requests/1/pin",
                   json{{"submit_at_us", caps::pinned_time_max_us + 1}}),
               problem::out_of_range,
               {"field 'requests[1].pin.submit_at_us' must be an integer between 0 and " +
                std::to_string(caps::pinned_time_max_us)});
}

TEST_F(CatalogueErrors, APinnedAbortIsDecodesAbortOfPhaseAnytimeWithinTheI9Bound) {
  expect_error(put("/scenarios/0/requests/1/pin", json{{"abort_at_us", 40}}), problem::inconsistent,
               {"scenario 'page42': field 'requests[1].pin.abort_at_us' is given but the request "
                "has no 'abort'"});
  expect_error(put("/scenarios/0/requests/0/pin", json{{"abort_at_us", 40}}), problem::inconsistent,
               {"field 'requests[0].pin.abort_at_us' places the abort itself, so the request's "
                "'abort' must be 'anytime' (got 'during_transfer')"});
  json document = valid_document();
  json& request = document["scenarios"][0]["requests"][0];
  request["abort"] = "anytime";
  request.erase("abort_from");
  request["origin"] = "prefill";
  request["pin"] = json{{"abort_at_us", 40}};
  expect_error(document.dump(), problem::inconsistent,
               {"field 'requests[0].pin.abort_at_us' is a time at which decode sends the abort, "
                "but origin 'prefill'"});
  request.erase("origin");
  request["pin"] = json{{"submit_at_us", 50}, {"abort_at_us", 40}};
  expect_error(document.dump(), problem::inconsistent,
               {"field 'requests[0].pin.abort_at_us' is before requests[0].pin.submit_at_us = 50 "
                "(got 40)"});
  request["pin"] = json{{"submit_at_us", 50}, {"abort_at_us", 10'050}};
  expect_error(document.dump(), problem::inconsistent,
               {"field 'requests[0].pin.abort_at_us' comes 10000 us after the request's "
                "submission, not within heal_bound_us = 10000"});
  request["pin"] = json{{"submit_at_us", 50}, {"abort_at_us", 10'049}};
  EXPECT_NO_THROW(load_catalogue(write(document.dump())));
}

TEST_F(CatalogueErrors, PinnedSubmissionsFollowTheRequestsOrderAndTransferScenariosOnly) {
  json document = valid_document();
  document["scenarios"][0]["requests"][0]["pin"] = json{{"submit_at_us", 50}};
  document["scenarios"][0]["requests"][1]["pin"] = json{{"submit_at_us", 40}};
  expect_error(document.dump(), problem::inconsistent,
               {"field 'requests[1].pin.submit_at_us' is before requests[0].pin.submit_at_us = 50 "
                "(got 40): the world starts requests in index order"});
  document["scenarios"][0]["requests"][1]["pin"] = json{{"submit_at_us", 50}};
  EXPECT_NO_THROW(load_catalogue(write(document.dump())));
  expect_error(put("/scenarios/1/requests/0/pin", json{{"submit_at_us", 5}}), problem::inconsistent,
               {"scenario 'hicache': field 'requests[0].pin' belongs to transfer scenarios only "
                "(kind is 'prefetch')"});
}

// Prefill's bootstrap polls every 5 us, a step each: a time past step_limit x 5 us is never
// reached (a submission at 200 ms livelocked at the default 20000 steps, t=99775us).
TEST_F(CatalogueErrors, APinnedTimeMustBeWithinWhatTheStepLimitReaches) {
  expect_error(put("/scenarios/0/requests/1/pin", json{{"submit_at_us", 100'000}}),
               problem::inconsistent,
               {"scenario 'page42': field 'requests[1].pin.submit_at_us' is 100000 us, past what a "
                "run of step_limit = 20000 steps reaches: prefill's bootstrap polls every 5 us, a "
                "step each, so about 100000 us; raise step_limit (at most 200000) or shorten the "
                "log's idle gaps"});
  json document = valid_document();
  document["scenarios"][0]["requests"][1]["pin"] = json{{"submit_at_us", 100'000}};
  document["scenarios"][0]["step_limit"] = 20'001;
  EXPECT_NO_THROW(load_catalogue(write(document.dump())));
}

TEST_F(CatalogueErrors, ParseScenarioNamesItsOriginAndTheScenario) {
  json scenario = valid_document()["scenarios"][0];
  scenario["topology"]["decode_ranks"] = 0;
  try {
    parse_scenario(scenario, "run.trace.json");
    FAIL() << "no error";
  } catch (const catalogue_error& e) {
    EXPECT_EQ(e.problem(), problem::out_of_range);
    EXPECT_STREQ(e.what(),
                 "run.trace.json: scenario 'page42': field 'topology.decode_ranks' must be an "
                 "integer between 1 and 64 (got 0)");
  }
  scenario.erase("name");
  try {
    parse_scenario(scenario, "run.trace.json");
    FAIL() << "no error";
  } catch (const catalogue_error& e) {
    EXPECT_STREQ(e.what(), "run.trace.json: scenario (unnamed): missing required field 'name'");
  }
}

// Many requests at once: topology.concurrency and pages_by_rank, requests[i].arrive_at_us, load.
TEST_F(CatalogueErrors, ALoadAndTheFieldsOfManyRequestsAtOnceAreRefusedOneLineEach) {
  using enum catalogue_problem;
  const auto load = [](json fields) { return put("/scenarios/0/load", std::move(fields)); };
  const std::string top = "/scenarios/0/topology/";
  const std::string ints = "' must be an integer between 1 and ";
  const std::string only = "' belongs to transfer scenarios only (kind is 'prefetch')";
  const json timed = {{"room", 42}, {"arrive_at_us", 9}, {"pin", {{"submit_at_us", 9}}}};
  const json early = {{{"room", 1}, {"arrive_at_us", 5}}, {{"room", 2}, {"arrive_at_us", 4}}};
  const json big = {{"decode_ranks", 2}, {"page_bytes", 1 << 20}, {"pages_by_rank", {512, 8, 8}}};
  const std::vector<bad> table = {
      {load(json::object()), "missing required field 'load.count'", missing_field},
      {load({{"count", 0}}), "field 'load.count" + ints + "1022 (got 0)"},
      {load({{"count", 1023}}), "field 'load.count" + ints + "1022 (got 1023)"},  // 2 listed
      {load({{"count", 2}, {"abort", "anytime"}}),
       "field 'load.abort' needs its partner: 'abort' (the phase) and 'abort_every'", inconsistent},
      {load({{"count", 2}, {"abort_every", 2}}), "abort_every' needs its partner", inconsistent},
      {load({{"count", 2}, {"pages", 9}}),
       "field 'load.pages' must fit the smallest pool of the topology, 8 pages (got 9)"},
      {load({{"count", 2}, {"chunks", 3}}), "field 'load.chunks" + ints + "2 (got 3)"},
      {load({{"count", 2}, {"rooms", 3}}), "field 'load.rooms" + ints + "2 (got 3)"},
      {load({{"count", 2}, {"first_room", 18446744073709551615ULL}}),
       "field 'load.first_room' leaves no room for 2 room ids from it (got 18446744073709551615)"},
      {load({{"count", 2}, {"first_rom", 5}}),
       "unknown field 'load.first_rom' (did you mean 'load.first_room'?)", unknown_field},
      {put(top + "pages_by_rank", {8, 8}),
       "'topology.pages_by_rank' must give one pool per rank, prefill ranks then decode ranks: 3",
       inconsistent},
      {put(top + "pages_by_rank", {8, 0, 8}), "pages_by_rank[1]" + ints + "512 (got 0)"},
      {put(top + "pages_by_rank", {8, 8, 513}), "pages_by_rank[2]" + ints + "512 (got 513)"},
      {put(top + "pages_by_rank", 8), "'topology.pages_by_rank' must be an array", wrong_type},
      {put(top + "pages_by_rank", {8, 1, 8}),
       "field 'requests[0].pages' must fit the smallest of topology.pages_by_rank, 1 (got 2)"},
      {put("/scenarios/0/topology", big),
       "the pages of topology.pages_by_rank x page_bytes = 528 x 1048576 = 553648128 bytes"},
      {put(top + "concurrency", 0), "field 'topology.concurrency" + ints + "1024 (got 0)"},
      {put(top + "concurrency", 1025), "field 'topology.concurrency" + ints + "1024 (got 1025)"},
      {put("/scenarios/0/requests/1", timed),
       "'requests[1].arrive_at_us' and pin.submit_at_us both say when", inconsistent},
      {put("/scenarios/0/requests/1/arrive_at_us", 100'000),
       "'requests[1].arrive_at_us' is 100000 us, past what a run of step_limit = 20000 steps",
       inconsistent},
      {put("/scenarios/0/requests", early),
       "'requests[1].arrive_at_us' is before requests[0].arrive_at_us = 5 (got 4)", inconsistent},
      {put("/scenarios/1/topology/concurrency", 2), "'topology.concurrency" + only, inconsistent},
      {put("/scenarios/1/topology/pages_by_rank", {8}), "pages_by_rank" + only, inconsistent},
  };
  for (const auto& b : table) expect_error(b.change, b.kind, {b.message});
}

// --- hostile catalogues ----------------------------------------------------------------------

// 200 KB of nested arrays crashed the loader (SIGSEGV: the parser and the document's
// destructor recurse per level), and 40 KB took 775 MB (every open container copied its
// parent's path).
TEST_F(CatalogueErrors, DeepNestingIsRefusedBeforeParsingWithTheDepth) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  expect_error("{\"format\": " + deep + "}", problem::malformed_json,
               {"JSON nests deeper than 64 levels (the bracket at byte 74 opens level 65; no kvsim "
                "document nests deeper than 7)"});
  expect_error(R"({"format": "kvsim-catalogue", "version": 1, "scenarios": [{"name": )" + deep +
                   "}]}",
               problem::malformed_json, {"JSON nests deeper than 64 levels"});
}

TEST_F(CatalogueErrors, TheDeepestLegalDocumentNestsSevenLevels) {
  // The document, scenarios, a scenario, faults, gates, a gate: six levels.
  const std::string text = valid_document().dump();
  EXPECT_FALSE(spec::json_nesting_exceeds(text, 6));
  EXPECT_TRUE(spec::json_nesting_exceeds(text, 5));
  // The shipped catalogue holds a pinned scenario (pinned_overlap): seven, as below.
  EXPECT_FALSE(spec::json_nesting_exceeds(read_bytes(KVSIM_CATALOGUE), 7));
  EXPECT_TRUE(spec::json_nesting_exceeds(read_bytes(KVSIM_CATALOGUE), 6));
  // The document, scenarios, a scenario, requests, a request, its pin, decode_pages: seven,
  // what json_nesting_max's headroom is counted from.
  json pinned = valid_document();
  pinned["scenarios"][0]["requests"][1]["pin"] = json{{"decode_pages", {5, 6}}};
  const fs::path path = write(pinned.dump());
  EXPECT_NO_THROW(load_catalogue(path));
  EXPECT_FALSE(spec::json_nesting_exceeds(pinned.dump(), 7));
  EXPECT_TRUE(spec::json_nesting_exceeds(pinned.dump(), 6));
}

TEST_F(CatalogueErrors, AnErrorShowsAValueFlatAndShort) {
  json deep = json::array({std::string(100'000, 'x')});
  for (int level = 0; level < 50; ++level) deep = json::array({deep, 1});
  expect_error(put("/scenarios/0/name", deep), problem::wrong_type,
               {"scenarios[0]: field 'name' must be a string (got [[...],1])"});
  json wide = json::array();
  for (int i = 0; i < 100'000; ++i) wide.push_back(i);
  expect_error(put("/scenarios/0/kind", wide), problem::wrong_type,
               {"field 'kind' must be one of 'transfer', 'prefetch' (got [0,1,2,3,4,5,6,7,8,9,10,11,"
                "12,13,14,15,16,17,18,19,20,21,...)"});
  expect_error(put("/scenarios/0/kind", std::string(100'000, 'k')), problem::unknown_value,
               {"(got \"" + std::string(56, 'k') + "...)"});  // 60 characters
}

TEST_F(CatalogueErrors, ALongKeyIsShownShort) {
  const std::string key(100'000, 'k');
  expect_error(put("/scenarios/0/" + key, 1), problem::unknown_field,
               {"unknown field '" + key.substr(0, 57) + "...'"});
  // A duplicate key deep down: the path names every level, each key cut short.
  const std::string text = "{\"" + key + "\": {\"" + key + "\": {\"a\": 1, \"a\": 2}}}";
  try {
    parse_catalogue(text, "long.json");
    ADD_FAILURE() << "no error";
  } catch (const catalogue_error& e) {
    EXPECT_EQ(e.problem(), problem::duplicate_key);
    EXPECT_EQ(std::string(e.what()), "long.json: field '" + key.substr(0, 57) + "..." + "." +
                                         key.substr(0, 57) + "....a' appears twice in one object "
                                         "(JSON keys must be unique)");
  }
  // Sixty such levels: the path keeps its end, 240 characters.
  std::string deep;
  for (int level = 0; level < 60; ++level) deep += "{\"" + key + std::to_string(level) + "\": ";
  deep += "{\"a\": 1, \"a\": 2}" + std::string(60, '}');
  try {
    parse_catalogue(deep, "deep.json");
    ADD_FAILURE() << "no error";
  } catch (const catalogue_error& e) {
    EXPECT_EQ(e.problem(), problem::duplicate_key);
    EXPECT_EQ(std::string(e.what()).rfind("deep.json: field '...", 0), 0u) << e.what();
    EXPECT_LT(std::string(e.what()).size(), 350u) << e.what();
  }
}

// Found by fuzz_catalogue: nlohmann's parse error quotes the token it stopped in, and a
// token can be a whole 50 KB string of the file.
TEST_F(CatalogueErrors, AParseErrorQuotesItsTokenShort) {
  expect_error("{\"" + std::string(50'000, 'k') + "\xff\": 1}", problem::malformed_json,
               {"malformed or truncated JSON at byte 50003 (parse error at line 1, column 50003: "
                "syntax error while parsing object key - invalid string: ill-formed UTF-8 byte; "
                "last read: '\"" + std::string(56, 'k') + "...')"});
}

// 10,000 ranks in a 2 KB file took over 2 GB and 40 s, prefill_ranks 100000 9.8 GB, and
// pages_per_rank or page_bytes 4294967295 ended in std::bad_alloc.
TEST_F(CatalogueErrors, TheSizeCapsAreOneLineEach) {
  const std::vector<bad> table = {
      {put("/scenarios/0/topology/prefill_ranks", 10000),
       "field 'topology.prefill_ranks' must be an integer between 1 and 64 (got 10000)"},
      {put("/scenarios/0/topology/prefill_ranks", 100000),
       "field 'topology.prefill_ranks' must be an integer between 1 and 64 (got 100000)"},
      {put("/scenarios/0/topology/decode_ranks", 65),
       "field 'topology.decode_ranks' must be an integer between 1 and 64 (got 65)"},
      {put("/scenarios/1/topology/attention_group", 65),
       "field 'topology.attention_group' must be an integer between 1 and 64 (got 65)"},
      {put("/scenarios/0/topology/pages_per_rank", 4294967295ULL),
       "field 'topology.pages_per_rank' must be an integer between 1 and 512 (got 4294967295)"},
      {put("/scenarios/0/topology/page_bytes", 4294967295ULL),
       "field 'topology.page_bytes' must be an integer between 17 and 1048576 (got 4294967295)"},
      {put("/scenarios/0/requests/0/siblings", 65),
       "field 'requests[0].siblings' must be an integer between 1 and 64 (got 65)"},
      {put("/scenarios/0/step_limit", 200001),
       "field 'step_limit' must be an integer between 1 and 200000 (got 200001)"},
      {put("/scenarios/0/topology",
           json{{"prefill_ranks", 64}, {"decode_ranks", 64}, {"pages_per_rank", 512},
                {"page_bytes", 8192}}),
       "field 'topology' asks for (prefill_ranks + decode_ranks) x pages_per_rank x page_bytes = "
       "128 x 512 x 8192 = 536870912 bytes of simulated memory, more than 268435456 (256 MiB)"},
      {put("/scenarios/1/topology",
           json{{"attention_group", 64}, {"pages_per_rank", 512}, {"page_bytes", 16384}}),
       "field 'topology' asks for attention_group x pages_per_rank x page_bytes = 64 x 512 x "
       "16384 = 536870912 bytes of simulated memory, more than 268435456 (256 MiB)"},
  };
  for (const auto& b : table) {
    const bool hicache = b.change.pointer.rfind("/scenarios/1", 0) == 0;
    expect_error(b.change, problem::out_of_range,
                 {(hicache ? "scenario 'hicache': " : "scenario 'page42': ") + b.message});
  }
  // 1,025 requests.
  json document = valid_document();
  for (int i = 0; i < 1023; ++i) document["scenarios"][0]["requests"].push_back(json{{"room", i}});
  expect_error(document.dump(), problem::out_of_range,
               {"scenario 'page42': field 'requests' must list at most 1024 requests (got 1025)"});
  // 64 x 64 ranks: request 0 with 4 siblings and request 1 post (4 + 1) x 4096 transfers.
  document = valid_document();
  document["scenarios"][0]["topology"]["prefill_ranks"] = 64;
  document["scenarios"][0]["topology"]["decode_ranks"] = 64;
  document["scenarios"][0]["requests"][0]["siblings"] = 4;
  expect_error(document.dump(), problem::out_of_range,
               {"scenario 'page42': field 'requests' ask for 20480 transfers (chunks x siblings x "
                "prefill_ranks x decode_ranks, summed over the requests), more than 16384"});
  // 1 MiB pages sent from 64 prefill ranks to 5 decode ranks: 2 x 2 MiB x 320 = 1.25 GiB.
  document = valid_document();
  document["scenarios"][0]["topology"] =
      json{{"prefill_ranks", 64}, {"decode_ranks", 5}, {"pages_per_rank", 2}, {"page_bytes", 1 << 20}};
  expect_error(document.dump(), problem::out_of_range,
               {"scenario 'page42': field 'requests' move 1342177280 bytes (pages x "
                "topology.page_bytes x prefill_ranks x decode_ranks, summed over the requests), "
                "more than 1073741824 (1 GiB)"});
}

TEST_F(CatalogueErrors, AWorldAtEveryCapLoads) {
  json document = valid_document();
  json& page42 = document["scenarios"][0];
  page42["topology"] = json{{"prefill_ranks", 64}, {"decode_ranks", 64}, {"pages_per_rank", 512},
                            {"page_bytes", 17}};
  page42["requests"][0]["siblings"] = 3;  // (3 + 1) x 4096 = 16384 transfers
  page42["step_limit"] = 200000;
  json& hicache = document["scenarios"][1];
  hicache["topology"] = json{{"attention_group", 64}, {"pages_per_rank", 512}, {"page_bytes", 8192}};
  hicache["faults"]["prefetch_states"] = json(std::vector<std::string>(64, "active"));
  const auto scenarios = parse_catalogue(document.dump(), "caps.json");
  ASSERT_EQ(scenarios.size(), 2u);
  EXPECT_EQ(scenarios[0].topology.prefill_ranks, caps::ranks_per_side_max);
  EXPECT_EQ(scenarios[1].topology.attention_group * std::uint64_t{512} * 8192, caps::world_bytes_max);
}

}  // namespace
}  // namespace kvsim::scenarios::catalogue_errors_test
