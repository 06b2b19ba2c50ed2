// kvsim check (tools/kvsim/corpus_check.h): a bug's trace holds on the fixed core and fires on
// the broken one; a safe trace holds while it replays as recorded and fires when one decision
// no longer fits; a corpus that cannot be read is bad input naming the file, before anything
// runs; the JUnit report escapes what it is given.
#include "tools/kvsim/corpus_check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/trace.h"
#include "tests/tools/cli_call.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/junit.h"

namespace kvsim::tools::corpus_check_test {
namespace {

namespace fs = std::filesystem;

using testing::read;

// A directory of this file's own (ctest runs tests of several files at once).
fs::path fresh_dir(const std::string& name) { return testing::fresh_dir("corpus_" + name); }

int run_to(const fs::path& trace, const std::string& scenario, const std::string& variant,
           const std::string& seed) {
  std::ostringstream out;
  return cmd_run(
      {"--scenario", scenario, "--variant", variant, "--seed", seed, "--trace", trace.string()},
      out);
}

// page42 on B1 (seed 1 finds I3) and on safe (seed 1 is clean), side by side in `dir`.
void write_bug_and_safe_traces(const fs::path& dir) {
  ASSERT_EQ(run_to(dir / "page42.B1.json", "page42", "B1", "1"), 1);
  ASSERT_EQ(run_to(dir / "page42.safe.seed1.json", "page42", "safe", "1"), 0);
}

int check(const arguments& args, std::string& out) {
  std::ostringstream text;
  const int code = cmd_check(args, text);
  out = text.str();
  return code;
}

TEST(CorpusCheck, ABugsTraceHoldsOnSafeAndFiresOnTheBug) {
  const fs::path dir = fresh_dir("rules");
  write_bug_and_safe_traces(dir);
  const std::vector<corpus_trace> corpus = load_corpus(dir);
  ASSERT_EQ(corpus.size(), 2u);
  EXPECT_EQ(corpus[0].file.filename(), "page42.B1.json") << "sorted by name";
  EXPECT_EQ(corpus[0].rule, corpus_rule::fix_holds);
  EXPECT_EQ(corpus[1].rule, corpus_rule::replays_as_recorded);

  const corpus_verdict fixed = check_trace(corpus[0], core::variant::safe());
  EXPECT_TRUE(fixed.held) << fixed.why;
  EXPECT_FALSE(fixed.replayed);
  EXPECT_EQ(fixed.decisions_recorded, corpus[0].loaded.trace.decisions.size());
  EXPECT_GT(fixed.decisions_fit, 0u) << "the fixed core asks the same first questions";
  EXPECT_LE(fixed.decisions_fit, fixed.decisions_recorded);
  EXPECT_EQ(fixed.reproduce(),
            "kvsim replay " + corpus[0].file.string() + " --lenient --variant safe");

  const auto b1 = *core::variant::from_name("B1");
  const corpus_verdict broken = check_trace(corpus[0], b1);
  EXPECT_FALSE(broken.held);
  ASSERT_TRUE(broken.replayed);
  EXPECT_EQ(broken.replayed->invariant, "I3");
  EXPECT_EQ(broken.why, "found on B1: " + broken.replayed->message);
  EXPECT_EQ(broken.reproduce(), "kvsim replay " + corpus[0].file.string() + " --lenient");

  const corpus_verdict safe = check_trace(corpus[1], core::variant::safe());
  EXPECT_TRUE(safe.held) << safe.why;
  EXPECT_EQ(safe.decisions_fit, safe.decisions_recorded) << "strict: every decision fits";
  EXPECT_EQ(safe.reproduce(), "kvsim replay " + corpus[1].file.string());
}

TEST(CorpusCheck, ASafeTraceWithOneDecisionEditedIsARegression) {
  const fs::path dir = fresh_dir("edited");
  ASSERT_EQ(run_to(dir / "safe.json", "page42", "safe", "1"), 0);
  sim::trace t = sim::load_trace(dir / "safe.json");
  // As if the core now offered another number of choices at decision 5.
  ASSERT_GT(t.decisions.size(), 5u);
  t.decisions[5].options += 1;
  sim::write_trace(dir / "safe.json", t);

  const std::vector<corpus_trace> corpus = load_corpus(dir);
  const corpus_verdict v = check_trace(corpus.front(), core::variant::safe());
  EXPECT_FALSE(v.held);
  ASSERT_TRUE(v.diverged);
  EXPECT_EQ(v.diverged->decision_index, 5u);
  EXPECT_EQ(v.decisions_fit, 5u);
  EXPECT_NE(v.why.find("diverged at decision 5"), std::string::npos) << v.why;

  std::string out;
  EXPECT_EQ(check({dir.string()}, out), 1);
  EXPECT_NE(out.find("safe.json"), std::string::npos) << out;
  EXPECT_NE(out.find("REGRESSION"), std::string::npos) << out;
  EXPECT_NE(out.find("reproduce: kvsim replay " + (dir / "safe.json").string()), std::string::npos)
      << out;
  EXPECT_NE(out.find("1 traces, 0 held, 1 regression"), std::string::npos) << out;
}

TEST(CorpusCheck, JsonAndJunitHaveARowPerTrace) {
  const fs::path dir = fresh_dir("reports");
  write_bug_and_safe_traces(dir);
  const fs::path junit_file = fresh_dir("reports_out") / "check.xml";
  std::string out;
  ASSERT_EQ(check({dir.string(), "--json", "--junit", junit_file.string(), "--variant", "B1"}, out),
            1);
  const auto report = nlohmann::json::parse(out);
  EXPECT_EQ(report["variant"], "B1");
  EXPECT_EQ(report["traces"], 2);
  ASSERT_EQ(report["rows"].size(), 2u);
  const auto& bug = report["rows"][0];
  EXPECT_EQ(bug["recorded_variant"], "B1");
  EXPECT_EQ(bug["recorded_finding"]["invariant"], "I3");
  EXPECT_EQ(bug["mode"], "lenient");
  EXPECT_EQ(bug["verdict"], "regression");
  EXPECT_EQ(bug["replayed_finding"]["invariant"], "I3");
  for (const char* field : {"file", "scenario", "decisions_fit", "decisions_recorded", "why",
                            "reproduce", "divergence", "seconds", "held"}) {
    EXPECT_TRUE(bug.contains(field)) << field;
  }
  EXPECT_EQ(report["rows"][1]["mode"], "strict");

  const std::string xml = read(junit_file);
  EXPECT_NE(xml.find("<testsuite name=\"kvsim check\" tests=\"2\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"found on B1: I3"), std::string::npos) << xml;
  EXPECT_NE(xml.find("reproduce: kvsim replay " + (dir / "page42.B1.json").string() + " --lenient"),
            std::string::npos)
      << xml;
}

TEST(CorpusCheck, ACorpusThatCannotBeReadIsBadInputNamingTheFile) {
  EXPECT_THROW(load_corpus("/no/such/corpus"), input_error);
  const fs::path empty = fresh_dir("empty");
  std::ofstream(empty / "README.md") << "not a trace\n";
  EXPECT_THROW(load_corpus(empty), input_error) << "a README alone is no corpus";

  const fs::path bad = fresh_dir("malformed");
  write_bug_and_safe_traces(bad);
  std::ofstream(bad / "truncated.json") << R"({"format": "kvsim-trace", "version": 1, "kv)";
  try {
    load_corpus(bad);
    FAIL() << "a truncated trace was accepted";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated.json"), std::string::npos) << e.what();
  }

  const fs::path clean_bug = fresh_dir("clean_bug");
  // B1 is decode's release at abort: the prefetch world has no such path, so the run is clean.
  ASSERT_EQ(run_to(clean_bug / "b1_clean.json", "hicache_local_missing", "B1", "1"), 0);
  EXPECT_THROW(load_corpus(clean_bug), input_error) << "a bug's trace without its finding";

  std::string out;
  EXPECT_THROW(check({}, out), usage_error);
  EXPECT_THROW(check({empty.string(), "--variant", "B99"}, out), usage_error);
}

TEST(Junit, EscapesMarkupAndControlCharacters) {
  EXPECT_EQ(junit::xml_escaped("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(junit::xml_escaped(std::string("x\x01y\tz\n")), "x\xEF\xBF\xBDy\tz\n");
  const std::string xml = junit::report_xml(
      "s", {{"c", "ok", 0.5, std::nullopt, ""},
            {"c", "<bad>", 0.25, junit::failure{"why & how", "body <here>"}, "out"}});
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"&lt;bad&gt;\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"why &amp; how\">body &lt;here&gt;</failure>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("time=\"0.750\""), std::string::npos) << xml;
}

}  // namespace
}  // namespace kvsim::tools::corpus_check_test
