#pragma once
// A directory of traces as regression tests (kvsim check). Each trace is judged by how it was
// recorded:
// - with a historical bug (variant B1..H3, with a finding): the fix must still fix it. The
//   trace is replayed on the chosen core (safe by default) leniently, since the fixed core asks
//   other questions than the broken one: the recorded prefix that fits, then a random walk
//   from the trace's seed. Any finding is a regression.
// - with safe (a finding or none): the behaviour must not have changed. The trace is replayed
//   strictly on the chosen core: every decision as recorded, the same finding or none. A
//   divergence is a regression.
// Loading is all or nothing: a file that is not a trace this build reads (unreadable, foreign,
// truncated, its scenario no longer valid, a bug's trace without a finding) is an input_error
// naming it, before anything runs. Such a file tells nothing about the core, so it is not a
// regression; it is a corpus to repair (regenerate it: tests/corpus/README.md).
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/variant.h"
#include "sim/checker.h"
#include "sim/search/strategy.h"
#include "tools/kvsim/junit.h"
#include "tools/kvsim/trace_input.h"

namespace kvsim::tools {

enum class corpus_rule : std::uint8_t {
  fix_holds,            // a bug's finding: leniently replayed, must come out clean
  replays_as_recorded,  // recorded with safe: strictly replayed, must come out as recorded
};

struct corpus_trace {
  std::filesystem::path file;
  loaded_trace loaded;
  corpus_rule rule = corpus_rule::replays_as_recorded;
};

struct corpus_verdict {
  std::filesystem::path file;
  std::string scenario;
  std::string recorded_variant;
  std::optional<sim::finding> recorded;
  corpus_rule rule = corpus_rule::replays_as_recorded;
  std::string core_variant;  // the variant it was replayed on
  bool held = false;
  std::uint64_t decisions_fit = 0;  // recorded decisions replayed before a misfit
  std::uint64_t decisions_recorded = 0;
  std::optional<sim::finding> replayed;
  std::optional<sim::divergence> diverged;
  std::string why;  // one line: what went wrong (empty when held)
  double seconds = 0;

  // The kvsim replay command that runs exactly this replay again.
  std::string reproduce() const;
};

// The *.json files directly in `dir`, sorted by name (other files, such as a README, and
// subdirectories are not read). input_error when `dir` is not a directory or holds none.
std::vector<std::filesystem::path> corpus_files(const std::filesystem::path& dir);

// Every trace of `dir` loaded and given its rule; the first file that cannot be is an
// input_error naming it.
std::vector<corpus_trace> load_corpus(const std::filesystem::path& dir);

corpus_verdict check_trace(const corpus_trace& trace, const core::variant& core_variant);

// One line per trace: file, recorded variant and finding, replay, verdict, prefix fit; under a
// regression, its reason and the command that reproduces it.
std::string corpus_table(const std::vector<corpus_verdict>& verdicts);
// "corpus DIR on safe: N traces, H held, R regressions"
std::string corpus_summary(const std::filesystem::path& dir, const core::variant& core_variant,
                           const std::vector<corpus_verdict>& verdicts);
nlohmann::json corpus_json(const std::filesystem::path& dir, const core::variant& core_variant,
                           const std::vector<corpus_verdict>& verdicts);
std::vector<junit::test_case> corpus_junit_cases(const std::vector<corpus_verdict>& verdicts);

}  // namespace kvsim::tools
