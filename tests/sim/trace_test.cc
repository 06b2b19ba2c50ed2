#include "sim/trace.h"

#include "spec/input_caps.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

namespace kvsim::sim::trace_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

trace sample_trace() {
  trace t;
  t.kvsim_version = "0.1.0";
  t.scenario =
      json{{"name", "page42"}, {"ranks", 2},
           {"pages_max", 64},  {"workload", json::array({json{{"room", 7}, {"pages", 3}}})},
           {"ratio", 0.25},    {"big", std::numeric_limits<std::uint64_t>::max()}};
  t.variant = "B3";
  t.strategy = "pct:3";
  t.seed = std::numeric_limits<std::uint64_t>::max();  // does not survive a double
  t.faults.set(fault_kind::message_drop, 50'000);
  t.faults.set(fault_kind::abort, 1'000'000);
  t.actors = {{0, "prefill", 0}, {1, "decode", 0}, {1, "decode", 1}};
  t.decisions = {{decision_kind::schedule, 3, 1, 1},
                 {decision_kind::schedule, 2, 0, delivery_bit | 5},
                 {decision_kind::fault, 2, 1, static_cast<std::uint64_t>(fault_kind::message_drop)},
                 {decision_kind::data, 10, 9, 0xffffffffffffffffULL},
                 {decision_kind::schedule, 1, 0, 2}};
  t.events = {"step 0 t=0us r0.prefill.0 actor_started name=r0.prefill.0",
              "step 1 t=5us world fault_fired drop \"quoted\" \\ caf\xc3\xa9"};
  t.found = finding{"I7",
                    "r1 read page 3 holding room 8/gen 0's bytes",
                    {0, 1},
                    {"wait-for: r0 -> r1", "second line"}};
  t.steps = 5;
  return t;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh file each time: ext4 flushes a file truncated and rewritten in place on close, which
// would make the loops below over thousands of damaged copies wait on the disk.
void write_bytes(const fs::path& path, const std::string& bytes) {
  fs::remove(path);
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

class Traces : public ::testing::Test {
 protected:
  void SetUp() override {
    // Per test and process: ctest runs the tests of this binary in parallel processes.
    dir = fs::temp_directory_path() /
          ("kvsim_trace_test_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // Writes the sample trace, lets `edit` change its JSON, and stores the result.
  template <class Edit>
  fs::path edited(Edit edit) {
    const fs::path path = dir / "edited.json";
    write_trace(path, sample_trace());
    json document = json::parse(read_bytes(path));
    edit(document);
    write_bytes(path, document.dump(1));
    return path;
  }

  // Loading `path` fails with one line that names the file and contains `expected`.
  static void expect_load_error(const fs::path& path, const std::string& expected) {
    try {
      load_trace(path);
      ADD_FAILURE() << "loading " << path << " did not throw";
    } catch (const trace_error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
      EXPECT_NE(message.find(expected), std::string::npos)
          << "message: " << message << "\nexpected to contain: " << expected;
    }
  }

  fs::path dir;
};

// --- writing ------------------------------------------------------------------------------

TEST_F(Traces, RoundTripKeepsEveryField) {
  const trace t = sample_trace();
  write_trace(dir / "t.json", t);
  const trace loaded = load_trace(dir / "t.json");
  EXPECT_EQ(loaded.kvsim_version, t.kvsim_version);
  EXPECT_EQ(loaded.scenario, t.scenario);
  EXPECT_EQ(loaded.variant, t.variant);
  EXPECT_EQ(loaded.strategy, t.strategy);
  EXPECT_EQ(loaded.seed, t.seed);
  EXPECT_EQ(loaded.faults, t.faults);
  EXPECT_EQ(loaded.actors, t.actors);
  EXPECT_EQ(loaded.decisions, t.decisions);
  EXPECT_EQ(loaded.events, t.events);
  EXPECT_EQ(loaded.found, t.found);
  EXPECT_EQ(loaded.steps, t.steps);
  EXPECT_EQ(loaded, t);
}

TEST_F(Traces, RoundTripOfARunThatFoundNothing) {
  trace t;
  t.scenario = json::object();
  write_trace(dir / "empty.json", t);
  EXPECT_EQ(load_trace(dir / "empty.json"), t);
  EXPECT_EQ(json::parse(read_bytes(dir / "empty.json"))["finding"], nullptr);
}

TEST_F(Traces, TheSameTraceIsWrittenByteForByteTheSame) {
  write_trace(dir / "a.json", sample_trace());
  write_trace(dir / "b.json", sample_trace());
  const std::string a = read_bytes(dir / "a.json");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, read_bytes(dir / "b.json"));
}

TEST_F(Traces, FileIsTheDocumentedJsonWithTheHeaderFirst) {
  const trace t = sample_trace();
  write_trace(dir / "t.json", t);
  const std::string text = read_bytes(dir / "t.json");
  EXPECT_EQ(json::parse(text), to_json(t));
  EXPECT_EQ(text.rfind("{\n \"format\": \"kvsim-trace\",\n \"version\": 1,\n \"kvsim_version\"", 0),
            0u)
      << text.substr(0, 80);
  const json document = json::parse(text);
  EXPECT_EQ(document["seed"], "18446744073709551615");  // a string: doubles would round it
  EXPECT_EQ(document["decision_hash"].get<std::string>().size(), 16u);
  EXPECT_EQ(document["fault_profile"]["drop"], 50'000);
  EXPECT_EQ(document["fault_profile"]["delay"], 0);
  EXPECT_EQ(document["actors"][1],
            (json{{"id", 1}, {"rank", 1}, {"role", "decode"}, {"index", 0}}));
  EXPECT_EQ(document["decisions"][1], (json::array({0, 2, 0, std::to_string(delivery_bit | 5)})));
  EXPECT_NE(text.find("\n  [0,3,1,\"1\"],\n  [0,2,0,"), std::string::npos)
      << "one decision per line";
}

TEST_F(Traces, ASuccessfulWriteLeavesNoTemporaryFile) {
  write_trace(dir / "t.json", sample_trace());
  EXPECT_TRUE(fs::exists(dir / "t.json"));
  EXPECT_FALSE(fs::exists(dir / "t.json.tmp"));
}

TEST_F(Traces, AStaleTemporaryFileFromAnInterruptedWriteIsReplaced) {
  write_bytes(dir / "t.json.tmp", "half a trace");
  write_trace(dir / "t.json", sample_trace());
  EXPECT_EQ(load_trace(dir / "t.json"), sample_trace());
  EXPECT_FALSE(fs::exists(dir / "t.json.tmp"));
}

TEST_F(Traces, RewritingReplacesTheOldTrace) {
  write_trace(dir / "t.json", trace{});
  write_trace(dir / "t.json", sample_trace());
  EXPECT_EQ(load_trace(dir / "t.json"), sample_trace());
}

TEST_F(Traces, WritingIntoAMissingDirectoryThrowsAndLeavesNothing) {
  const fs::path path = dir / "no_such_dir" / "t.json";
  try {
    write_trace(path, sample_trace());
    FAIL() << "no error";
  } catch (const trace_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
  }
  EXPECT_FALSE(fs::exists(dir / "no_such_dir"));
  EXPECT_TRUE(fs::is_empty(dir));
}

// As root, a read-only directory does not stop the write; a directory squatting on the
// temporary file's name does, for any user.
TEST_F(Traces, AWriteThatCannotCreateItsTemporaryFileKeepsTheOldTrace) {
  const fs::path path = dir / "t.json";
  write_bytes(path, "old content");
  fs::create_directory(dir / "t.json.tmp");
  EXPECT_THROW(write_trace(path, sample_trace()), trace_error);
  EXPECT_EQ(read_bytes(path), "old content");
  EXPECT_TRUE(fs::is_directory(dir / "t.json.tmp")) << "not ours to remove";
}

TEST_F(Traces, AWriteThatCannotRenameRemovesItsTemporaryFileAndKeepsTheTarget) {
  const fs::path path = dir / "t.json";
  fs::create_directory(path);  // a directory where the trace should go: rename fails
  write_bytes(path / "keep", "old content");
  try {
    write_trace(path, sample_trace());
    FAIL() << "no error";
  } catch (const trace_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  }
  EXPECT_EQ(read_bytes(path / "keep"), "old content");
  EXPECT_FALSE(fs::exists(dir / "t.json.tmp"));
}

TEST_F(Traces, InvalidUtf8InFreeTextDoesNotLoseTheTrace) {
  trace t = sample_trace();
  t.found->message = "bad byte \xff here";
  write_trace(dir / "t.json", t);
  const trace loaded = load_trace(dir / "t.json");
  EXPECT_EQ(loaded.found->message, "bad byte \xef\xbf\xbd here");  // U+FFFD
  EXPECT_EQ(loaded.decisions, t.decisions);
}

// --- loading: one clear line per problem --------------------------------------------------

TEST_F(Traces, LoadingAMissingFileSaysSo) {
  expect_load_error(dir / "absent.json", "no such trace file");
}

TEST_F(Traces, LoadingADirectorySaysSo) { expect_load_error(dir, "is a directory, not a trace file"); }

TEST_F(Traces, LoadingAnEmptyFileSaysSo) {
  write_bytes(dir / "empty.json", "");
  expect_load_error(dir / "empty.json", "empty file");
  write_bytes(dir / "blank.json", " \n\n");
  expect_load_error(dir / "blank.json", "empty file");
}

TEST_F(Traces, LoadingMalformedJsonGivesTheBytePosition) {
  write_bytes(dir / "bad.json", "{\"format\": kvsim}");
  expect_load_error(dir / "bad.json", "malformed or truncated JSON at byte 12");
}

TEST_F(Traces, LoadingJsonThatIsNotAnObjectIsNotATrace) {
  write_bytes(dir / "array.json", "[1, 2]");
  expect_load_error(dir / "array.json", "not a kvsim trace");
}

TEST_F(Traces, LoadingJsonWithoutAFormatIsNotATrace) {
  const auto path = edited([](json& d) { d.erase("format"); });
  expect_load_error(path, "not a kvsim trace (no \"format\" field)");
}

TEST_F(Traces, LoadingJsonWithAnotherFormatIsNotATrace) {
  const auto path = edited([](json& d) { d["format"] = "chrome-trace"; });
  expect_load_error(path, "not a kvsim trace (\"format\" is \"chrome-trace\"");
}

TEST_F(Traces, LoadingANewerVersionSaysWhichVersionsAreSupported) {
  write_bytes(dir / "new.json",
              R"({"format": "kvsim-trace", "version": 7, "decisions": "v7 shape"})");
  try {
    load_trace(dir / "new.json");
    FAIL() << "no error";
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "new.json").string() +
                  ": trace format version 7 is newer than this kvsim supports (1)");
  }
}

TEST_F(Traces, LoadingVersionZeroIsRefused) {
  const auto path = edited([](json& d) { d["version"] = 0; });
  expect_load_error(path, "trace format version 0 is not valid");
}

TEST_F(Traces, LoadingAFileWithAMissingFieldNamesIt) {
  const auto path = edited([](json& d) { d.erase("variant"); });
  expect_load_error(path, "missing field 'variant'");
}

TEST_F(Traces, LoadingAFileWithAMissingNestedFieldNamesIt) {
  const auto path = edited([](json& d) { d["actors"][2].erase("role"); });
  expect_load_error(path, "missing field 'actors[2].role'");
}

TEST_F(Traces, LoadingAWronglyTypedFieldNamesIt) {
  const auto path = edited([](json& d) { d["steps"] = "five"; });
  expect_load_error(path, "field 'steps' must be a non-negative integer");
}

TEST_F(Traces, LoadingAMisshapenDecisionNamesIt) {
  const auto path = edited([](json& d) { d["decisions"][3] = json::array({0, 1}); });
  expect_load_error(path, "field 'decisions[3]' must be an array [kind, options, chosen, subject]");
}

TEST_F(Traces, LoadingASeedThatIsNotDecimalDigitsNamesIt) {
  const auto path = edited([](json& d) { d["seed"] = "12a"; });
  expect_load_error(path, "field 'seed' must be a string of decimal digits");
}

TEST_F(Traces, LoadingASeedBeyond64BitsNamesIt) {
  const auto path = edited([](json& d) { d["seed"] = "18446744073709551616"; });
  expect_load_error(path, "field 'seed' must be a string of decimal digits");
}

TEST_F(Traces, LoadingEditedDecisionsFailsTheHashCheck) {
  const auto path = edited([](json& d) { d["decisions"][0][2] = 2; });  // still a valid choice
  expect_load_error(path, "decision_hash");
  expect_load_error(path, "does not match the decisions");
}

TEST_F(Traces, LoadingAMalformedHashNamesIt) {
  const auto path = edited([](json& d) { d["decision_hash"] = "xyz"; });
  expect_load_error(path, "field 'decision_hash' must be a string of 16 lowercase hex digits");
}

TEST_F(Traces, LoadingAnOutOfRangeDecisionKindNamesIt) {
  const auto path = edited([](json& d) { d["decisions"][1][0] = 7; });
  expect_load_error(path, "field 'decisions[1]' has decision kind 7");
}

TEST_F(Traces, LoadingAChoiceBeyondItsOptionsNamesIt) {
  const auto path = edited([](json& d) { d["decisions"][2][2] = 2; });  // options = 2
  expect_load_error(path, "field 'decisions[2]' chose option 2 of only 2");
}

TEST_F(Traces, LoadingAnActorOutOfPlaceNamesIt) {
  const auto path = edited([](json& d) { d["actors"][1]["id"] = 5; });
  expect_load_error(path, "field 'actors[1].id' is 5 but must equal its position 1");
}

TEST_F(Traces, LoadingAnUnknownFaultKindNamesIt) {
  const auto path = edited([](json& d) { d["fault_profile"]["meteor"] = 1; });
  expect_load_error(path, "unknown fault kind 'meteor'");
}

TEST_F(Traces, ATraceFromBeforePeerDeathLoadsWithItOff) {
  const auto path = edited([](json& d) {
    d["fault_profile"]["peer_death"] = 7;  // proves the edit below is what is read
    d["fault_profile"].erase("peer_death");
  });
  EXPECT_EQ(load_trace(path).faults.of(fault_kind::peer_death), 0u);
}

// The drawn stop of faults travels in the profile; a trace written before the stop existed
// lacks it and loads as faults that never stop (its run replays as recorded).
TEST_F(Traces, TheFaultStopRoundTripsAndIsAbsentFromOlderTraces) {
  trace t = sample_trace();
  write_trace(dir / "never.json", t);
  EXPECT_FALSE(json::parse(read_bytes(dir / "never.json"))["fault_profile"].contains("faults_stop_us"));
  EXPECT_EQ(load_trace(dir / "never.json").faults.faults_stop_us, faults_never_stop);

  t.faults.faults_stop_us = 345;
  write_trace(dir / "stops.json", t);
  EXPECT_EQ(json::parse(read_bytes(dir / "stops.json"))["fault_profile"]["faults_stop_us"], 345);
  EXPECT_EQ(load_trace(dir / "stops.json"), t);
}

TEST_F(Traces, LoadingABadFaultStopNamesIt) {
  const auto path = edited([](json& d) { d["fault_profile"]["faults_stop_us"] = -3; });
  expect_load_error(path, "field 'fault_profile.faults_stop_us' must be a non-negative integer");
}

TEST_F(Traces, LoadingAFaultRateAboveCertaintyNamesIt) {
  const auto path = edited([](json& d) { d["fault_profile"]["drop"] = 2'000'000; });
  expect_load_error(path, "field 'fault_profile.drop' is 2000000 per million");
}

TEST_F(Traces, LoadingAWronglyTypedFindingNamesIt) {
  const auto path = edited([](json& d) { d["finding"] = "I7"; });
  expect_load_error(path, "field 'finding' must be null or an object");
}

TEST_F(Traces, LoadingAFindingWithBadEvidenceNamesIt) {
  const auto path = edited([](json& d) { d["finding"]["evidence"][1] = -1; });
  expect_load_error(path, "field 'finding.evidence[1]' must be a non-negative integer");
}

TEST_F(Traces, LoadingANonStringEventNamesIt) {
  const auto path = edited([](json& d) { d["events"][1] = 3; });
  expect_load_error(path, "field 'events[1]' must be a string");
}

TEST_F(Traces, LoadingAScenarioThatIsNotAnObjectNamesIt) {
  const auto path = edited([](json& d) { d["scenario"] = json::array(); });
  expect_load_error(path, "field 'scenario' must be a JSON object");
}

// Hostile traces. 200 KB of nested arrays crashed `kvsim replay` (SIGSEGV): the parser, the
// document's destructor and the format check's dump all recurse once per level.
TEST_F(Traces, DeepNestingIsRefusedBeforeParsingWithTheDepth) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  write_bytes(dir / "deep.json", "{\"format\": " + deep + "}");
  expect_load_error(dir / "deep.json",
                    "JSON nests deeper than 64 levels (the bracket at byte 74 opens level 65; no "
                    "kvsim document nests deeper than 7)");
  // Anywhere in the document, the inline scenario included.
  const auto path = edited([&](json& d) { d["scenario"]["name"] = "placeholder"; });
  std::string text = read_bytes(path);
  const std::string name = "\"placeholder\"";
  text.replace(text.find(name), name.size(), deep);
  write_bytes(path, text);
  expect_load_error(path, "JSON nests deeper than 64 levels");
}

TEST_F(Traces, NestingUpToTheLimitParsesAndBracketsInStringsDoNotCount) {
  // The document, the scenario and `arrays` nested arrays.
  const auto nested = [](int arrays) {
    json value = json::array();
    for (int i = 1; i < arrays; ++i) value = json::array({value});
    return value;
  };
  // 64 levels; brackets inside a string are text.
  const auto path = edited([&](json& d) {
    d["scenario"]["nested"] = nested(62);
    d["scenario"]["text"] = std::string(1000, '[') + "\"[{";
  });
  EXPECT_NO_THROW(load_trace(path));
  const auto deeper = edited([&](json& d) { d["scenario"]["nested"] = nested(63); });
  expect_load_error(deeper, "opens level 65");
}

TEST_F(Traces, AnErrorShowsAValueFlatAndShort) {
  const auto path = edited([](json& d) {
    json value = json::array({std::string(100'000, 'x')});
    for (int level = 0; level < 50; ++level) value = json::array({value, 1});
    d["format"] = value;
  });
  expect_load_error(path, "not a kvsim trace (\"format\" is [[...],1], expected \"kvsim-trace\")");
  const auto long_string = edited([](json& d) { d["format"] = std::string(100'000, 'y'); });
  try {
    load_trace(long_string);
    ADD_FAILURE() << "no error";
  } catch (const trace_error& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u) << e.what();
  }
}

// Found by fuzz_catalogue: nlohmann's parse error quotes the token it stopped in, and a
// token can be a whole 50 KB string of the file.
TEST_F(Traces, AParseErrorQuotesItsTokenShort) {
  write_bytes(dir / "token.json", "{\"format\": \"" + std::string(50'000, 'k') + "\xff\"}");
  expect_load_error(dir / "token.json",
                    "malformed or truncated JSON at byte 50013 (parse error at line 1, column "
                    "50013: syntax error while parsing value - invalid string: ill-formed UTF-8 "
                    "byte; last read: '\"" + std::string(56, 'k') + "...')");
}

TEST_F(Traces, NamesThatErrorsPrintWholeAreShort) {
  expect_load_error(edited([](json& d) { d["variant"] = std::string(201, 'V'); }),
                    "field 'variant' is 201 characters long, more than 200");
  expect_load_error(edited([](json& d) { d["strategy"] = std::string(100'000, 's'); }),
                    "field 'strategy' is 100000 characters long, more than 200");
  const auto kind = edited([](json& d) { d["fault_profile"][std::string(100'000, 'k')] = 0; });
  try {
    load_trace(kind);
    ADD_FAILURE() << "no error";
  } catch (const trace_error& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u) << e.what();
  }
}

TEST_F(Traces, ErrorMessagesStayOneLineWhateverTheFileIsCalled) {
  try {
    load_trace(dir / "odd\nname.json");
    FAIL() << "no error";
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "odd").string() + "\\nname.json: no such trace file");
  }
}

// --- loading: damaged files never crash ---------------------------------------------------

TEST_F(Traces, EveryTruncationOfAValidTraceIsAnError) {
  write_trace(dir / "t.json", sample_trace());
  const std::string full = read_bytes(dir / "t.json");
  ASSERT_EQ(full.back(), '\n');
  // Cutting only the final newline leaves complete JSON; any shorter cut loses some of it.
  for (std::size_t length = 0; length + 1 < full.size(); ++length) {
    write_bytes(dir / "cut.json", full.substr(0, length));
    try {
      load_trace(dir / "cut.json");
      ADD_FAILURE() << "a trace cut at byte " << length << " of " << full.size() << " loaded";
    } catch (const trace_error& e) {
      ASSERT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  write_bytes(dir / "cut.json", full.substr(0, full.size() - 1));
  EXPECT_EQ(load_trace(dir / "cut.json"), sample_trace());
}

TEST_F(Traces, ACorruptedByteAnywhereLoadsOrFailsCleanly) {
  write_trace(dir / "t.json", sample_trace());
  const std::string full = read_bytes(dir / "t.json");
  for (const char replacement : {'#', '9', '"', '\0', '\xff'}) {
    for (std::size_t i = 0; i < full.size(); ++i) {
      std::string damaged = full;
      damaged[i] = replacement;
      write_bytes(dir / "bad.json", damaged);
      try {
        load_trace(dir / "bad.json");  // e.g. a changed letter inside an event line
      } catch (const trace_error& e) {
        ASSERT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      }
    }
  }
}

// --- offline inputs and outputs that hold -------------------------------------------------

// Refused by the open file's size, before a byte is read (the file is sparse: reading it
// would take 64 MiB and parsing it a gigabyte).
TEST_F(Traces, AFileOverTheSizeCapIsRefusedUnread) {
  const fs::path path = dir / "big.json";
  { std::ofstream create(path); }
  fs::resize_file(path, spec::trace_input.bytes_max + 1);
  expect_load_error(path, "67108865 bytes is over the 67108864-byte cap for a trace");
}

TEST_F(Traces, AKeyGivenTwiceIsRefusedWhereItIs) {
  write_trace(dir / "t.json", sample_trace());
  const std::string text = read_bytes(dir / "t.json");
  std::string top = text;
  top.replace(top.find("\"strategy\": "), 0, "\"strategy\": \"random\", ");
  write_bytes(dir / "top.json", top);
  expect_load_error(dir / "top.json", "field 'strategy' appears twice in one object");
  std::string nested = text;
  nested.replace(nested.find("\"message\": "), 0, "\"message\": \"a fake\", ");
  write_bytes(dir / "nested.json", nested);
  expect_load_error(dir / "nested.json", "field 'finding.message' appears twice in one object");
}

TEST_F(Traces, ANumberTooLargeForAnyTypeGivesAShortLine) {
  write_trace(dir / "t.json", sample_trace());
  std::string text = read_bytes(dir / "t.json");
  text.replace(text.find("\"steps\": ") + 9, 0, std::string(200'000, '9') + ", \"x\": ");
  write_bytes(dir / "huge.json", text);
  expect_load_error(dir / "huge.json", "unreadable JSON (number overflow");
  try {
    load_trace(dir / "huge.json");
  } catch (const trace_error& e) {
    EXPECT_LT(std::string(e.what()).size(), 1100u);
  }
}

// The link stays a link; the file it names is replaced whole, through a temporary file in the
// target's own directory.
TEST_F(Traces, AWriteThroughASymlinkReplacesItsTargetAtomically) {
  fs::create_directory(dir / "elsewhere");
  write_bytes(dir / "elsewhere" / "target.json", "old content");
  fs::create_symlink(fs::path("elsewhere") / "target.json", dir / "link.json");
  write_trace(dir / "link.json", sample_trace());
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(load_trace(dir / "elsewhere" / "target.json"), sample_trace());
  EXPECT_FALSE(fs::exists(dir / "link.json.tmp"));
  EXPECT_FALSE(fs::exists(dir / "elsewhere" / "target.json.tmp"));
}

// A write that fails (here: its temporary file cannot be made) leaves the link's target as
// it was: it used to be opened with O_TRUNC and written in place, so a full disk cut it short.
TEST_F(Traces, AFailedWriteThroughASymlinkLeavesTheTargetWhole) {
  fs::create_directory(dir / "elsewhere");
  write_bytes(dir / "elsewhere" / "target.json", "old content");
  fs::create_directory(dir / "elsewhere" / "target.json.tmp");
  fs::create_symlink(dir / "elsewhere" / "target.json", dir / "link.json");
  EXPECT_THROW(write_trace(dir / "link.json", sample_trace()), trace_error);
  EXPECT_EQ(read_bytes(dir / "elsewhere" / "target.json"), "old content");
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
}

// Inside a directory kvsim writes to by names of its own (explore --out), a link is planted:
// refused in one line, and what it points at is untouched.
TEST_F(Traces, ALinkWhereLinksAreRefusedIsNeverFollowed) {
  write_bytes(dir / "victim", "victim");
  fs::create_symlink(dir / "victim", dir / "t.json");
  try {
    write_trace(dir / "t.json", sample_trace(), link_policy::refuse);
    FAIL() << "no error";
  } catch (const trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_bytes(dir / "victim"), "victim");
  EXPECT_TRUE(fs::is_symlink(dir / "t.json"));
}

// A temporary file's name planted as a link is removed, not written through.
TEST_F(Traces, ALinkPlantedAsTheTemporaryFileIsNotWrittenThrough) {
  write_bytes(dir / "victim", "victim");
  fs::create_symlink(dir / "victim", dir / "t.json.tmp");
  write_trace(dir / "t.json", sample_trace(), link_policy::refuse);
  EXPECT_EQ(read_bytes(dir / "victim"), "victim");
  EXPECT_EQ(load_trace(dir / "t.json"), sample_trace());
}

}  // namespace
}  // namespace kvsim::sim::trace_test
