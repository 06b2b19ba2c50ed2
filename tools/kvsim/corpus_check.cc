#include "tools/kvsim/corpus_check.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <memory>
#include <sstream>
#include <system_error>

#include "spec/one_line.h"
#include "sim/search/random_walk.h"
#include "sim/search/replay.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/run_json.h"
#include "tools/kvsim/shell_word.h"

namespace kvsim::tools {
namespace {

namespace fs = std::filesystem;


std::string finding_text(const std::optional<sim::finding>& f) {
  return f ? f->message : std::string("no finding");
}

std::string recorded_text(const corpus_verdict& v) {
  return v.recorded_variant + " " + (v.recorded ? v.recorded->invariant : std::string("clean"));
}

std::string replay_text(const corpus_verdict& v) {
  return std::string(v.rule == corpus_rule::fix_holds ? "lenient" : "strict") + " on " +
         v.core_variant;
}

std::string fit_text(const corpus_verdict& v) {
  return std::to_string(v.decisions_fit) + " of " + std::to_string(v.decisions_recorded) +
         " decisions fit";
}

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// Why a strict replay of a safe trace did not come out as recorded (empty when it did).
std::string strict_misfit(const corpus_verdict& v, const run_report& report,
                          const loaded_trace& loaded) {
  if (v.diverged) {
    return "diverged at decision " + std::to_string(v.diverged->decision_index) + ": recorded " +
           v.diverged->expected + ", the run asked for " + v.diverged->actual;
  }
  if (!same_finding(report.found, loaded.trace.found)) {
    return "recorded " + finding_text(loaded.trace.found) + ", replayed on " + v.core_variant +
           ": " + finding_text(report.found);
  }
  if (report.decisions != loaded.trace.decisions) {
    return "the run took other decisions than the recording (" +
           std::to_string(report.decisions.size()) + " against " +
           std::to_string(loaded.trace.decisions.size()) + ")";
  }
  return {};
}

}  // namespace

std::string corpus_verdict::reproduce() const {
  std::string command = "kvsim replay " + shell_word(file.string());
  if (rule == corpus_rule::fix_holds) command += " --lenient";
  if (core_variant != recorded_variant) command += " --variant " + core_variant;
  return command;
}

std::vector<fs::path> corpus_files(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    throw input_error(dir.string() + ": no such directory");
  }
  std::vector<fs::path> files;
  fs::directory_iterator it(dir, error);
  if (error) throw input_error(dir.string() + ": cannot read the directory: " + error.message());
  for (const fs::directory_entry& entry : it) {
    if (entry.path().extension() == ".json" && entry.is_regular_file(error)) {
      files.push_back(entry.path());
    }
  }
  if (files.empty()) throw input_error(dir.string() + ": no trace files (*.json) in it");
  // Directory order is the file system's; sorted, the report reads the same everywhere.
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<corpus_trace> load_corpus(const fs::path& dir) {
  std::vector<corpus_trace> corpus;
  for (const fs::path& file : corpus_files(dir)) {
    corpus_trace entry{file, load_trace_file(file)};
    const sim::trace& t = entry.loaded.trace;
    if (entry.loaded.variant.is_safe()) {
      entry.rule = corpus_rule::replays_as_recorded;
    } else if (t.found) {
      entry.rule = corpus_rule::fix_holds;
    } else {
      // A bug's run that found nothing shows no bug: there is no fix for it to guard.
      throw input_error(file.string() + ": recorded with " + t.variant +
                        " but without a finding; a corpus trace of a bug must carry its finding");
    }
    corpus.push_back(std::move(entry));
  }
  return corpus;
}

corpus_verdict check_trace(const corpus_trace& trace, const core::variant& core_variant) {
  const loaded_trace& loaded = trace.loaded;
  corpus_verdict v;
  v.file = trace.file;
  v.scenario = loaded.spec.name;
  v.recorded_variant = loaded.trace.variant;
  v.recorded = loaded.trace.found;
  v.rule = trace.rule;
  v.core_variant = core_variant.name();
  v.decisions_recorded = loaded.trace.decisions.size();

  const auto start = std::chrono::steady_clock::now();
  const bool lenient = trace.rule == corpus_rule::fix_holds;
  // The same chooser as `kvsim replay` (random walk from the trace's seed after the prefix),
  // so the reproduce() command runs exactly this replay.
  sim::replay chooser(loaded.trace.decisions,
                      lenient ? sim::replay_mode::lenient : sim::replay_mode::strict,
                      lenient ? std::make_unique<sim::random_walk>(loaded.trace.seed) : nullptr);
  const run_report report =
      run_once(loaded.setup(lenient ? "replay-lenient" : "replay", core_variant), chooser,
               keep::outcome_only);
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  v.decisions_fit = chooser.replayed();
  v.replayed = report.found;
  v.diverged = report.diverged;
  if (lenient) {
    assert(!v.diverged && "a lenient replay never diverges, it falls back");
    if (report.found) v.why = "found on " + v.core_variant + ": " + report.found->message;
  } else {
    v.why = strict_misfit(v, report, loaded);
  }
  v.held = v.why.empty();
  return v;
}

// The table's cells come from the traces and their file names: echoed (escaped, cut short),
// so that a trace's text cannot add a line of its own to the report.
std::string corpus_table(const std::vector<corpus_verdict>& verdicts) {
  std::size_t file_width = 5;
  for (const corpus_verdict& v : verdicts) {
    file_width = std::max(file_width, spec::echoed(v.file.filename().string()).size());
  }
  std::ostringstream out;
  out << padded("trace", file_width + 2) << padded("recorded", 14) << padded("replay", 20)
      << padded("verdict", 12) << "prefix fit\n";
  for (const corpus_verdict& v : verdicts) {
    out << padded(spec::echoed(v.file.filename().string()), file_width + 2)
        << padded(spec::echoed(recorded_text(v)), 14)
        << padded(replay_text(v), 20) << padded(v.held ? "held" : "REGRESSION", 12) << fit_text(v)
        << "\n";
    if (!v.held) {
      out << "    " << spec::echoed(v.why, spec::message_chars_max)
          << "\n    reproduce: " << spec::echoed(v.reproduce(), spec::message_chars_max) << "\n";
    }
  }
  return out.str();
}

std::string corpus_summary(const fs::path& dir, const core::variant& core_variant,
                           const std::vector<corpus_verdict>& verdicts) {
  const auto held = static_cast<std::size_t>(
      std::count_if(verdicts.begin(), verdicts.end(), [](const auto& v) { return v.held; }));
  const std::size_t regressions = verdicts.size() - held;
  return "corpus " + spec::echoed(dir.string()) + " on " + core_variant.name() + ": " +
         std::to_string(verdicts.size()) + " traces, " + std::to_string(held) + " held, " +
         std::to_string(regressions) + (regressions == 1 ? " regression" : " regressions");
}

nlohmann::json corpus_json(const fs::path& dir, const core::variant& core_variant,
                           const std::vector<corpus_verdict>& verdicts) {
  nlohmann::json rows = nlohmann::json::array();
  std::size_t held = 0;
  for (const corpus_verdict& v : verdicts) {
    held += v.held ? 1 : 0;
    nlohmann::json divergence = nullptr;
    if (v.diverged) {
      divergence = {{"decision_index", v.diverged->decision_index},
                    {"expected", v.diverged->expected},
                    {"actual", v.diverged->actual}};
    }
    rows.push_back({{"file", v.file.string()},
                    {"scenario", v.scenario},
                    {"recorded_variant", v.recorded_variant},
                    {"recorded_finding", finding_json(v.recorded)},
                    {"mode", v.rule == corpus_rule::fix_holds ? "lenient" : "strict"},
                    {"variant", v.core_variant},
                    {"verdict", v.held ? "held" : "regression"},
                    {"held", v.held},
                    {"decisions_fit", v.decisions_fit},
                    {"decisions_recorded", v.decisions_recorded},
                    {"replayed_finding", finding_json(v.replayed)},
                    {"divergence", divergence},
                    {"why", v.why},
                    {"reproduce", v.reproduce()},
                    {"seconds", v.seconds}});
  }
  return {{"corpus", dir.string()},
          {"variant", core_variant.name()},
          {"traces", verdicts.size()},
          {"held", held},
          {"regressions", verdicts.size() - held},
          {"rows", std::move(rows)}};
}

std::vector<junit::test_case> corpus_junit_cases(const std::vector<corpus_verdict>& verdicts) {
  std::vector<junit::test_case> cases;
  for (const corpus_verdict& v : verdicts) {
    junit::test_case c;
    c.classname = "kvsim.check." + v.scenario;
    c.name = v.file.filename().string() + " [" + v.recorded_variant + ", " + replay_text(v) + "]";
    c.seconds = v.seconds;
    c.system_out = replay_text(v) + ": " + fit_text(v) + "; replayed: " + finding_text(v.replayed);
    if (!v.held) {
      c.failed = junit::failure{
          v.why, "trace: " + v.file.string() + "\nreproduce: " + v.reproduce() + "\n"};
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace kvsim::tools
