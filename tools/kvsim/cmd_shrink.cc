// kvsim shrink FILE -o OUT: delta-debugs a failing trace (Zeller & Hildebrandt, "Simplifying
// and Isolating Failure-Inducing Input", TSE 2002, applied to a run's fault profile and
// decision list): fewer fault kinds, fewer fired faults, fewer preemptions, a shorter run;
// every step must keep the same invariant. The result replays strictly.
#include <algorithm>
#include <set>

#include "sim/search/guided_replay.h"
#include "spec/one_line.h"
#include "sim/search/replay.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/output_file.h"
#include "tools/kvsim/trace_input.h"

namespace kvsim::tools {
namespace {

constexpr const char* shrink_help =
    "usage: kvsim shrink FILE -o OUT\n"
    "  Minimises a trace with a finding, keeping its invariant: turns fault kinds off, un-fires\n"
    "  faults, removes preemptions, cuts the run short (what follows the cut runs without\n"
    "  preemptions or faults), until nothing more can go. Prints the sizes before and after\n"
    "  and writes a trace that replays strictly to OUT.\n"
    "  exit: 0 shrunk (or already minimal), 2 bad input (no finding, does not reproduce)\n";

struct attempt {
  sim::fault_profile faults;
  std::vector<sim::decision> decisions;  // what the run actually decided
  std::vector<std::uint64_t> preemption_points;
  std::uint64_t steps = 0;
};

struct size {
  std::uint64_t decisions = 0;
  std::uint64_t steps = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t faults_fired = 0;
  std::uint64_t fault_kinds_on = 0;
};

size size_of(const attempt& a) {
  size s;
  s.decisions = a.decisions.size();
  s.steps = a.steps;
  s.preemptions = a.preemption_points.size();
  for (const sim::decision& d : a.decisions) {
    if (d.kind == sim::decision_kind::fault && d.chosen == 1) ++s.faults_fired;
  }
  for (std::uint32_t p : a.faults.per_million) s.fault_kinds_on += p > 0 ? 1 : 0;
  return s;
}

// Smaller in every measure, and strictly smaller in one.
bool smaller(const size& a, const size& b) {
  const bool no_worse = a.decisions <= b.decisions && a.preemptions <= b.preemptions &&
                        a.faults_fired <= b.faults_fired && a.fault_kinds_on <= b.fault_kinds_on;
  const bool better = a.decisions < b.decisions || a.preemptions < b.preemptions ||
                      a.faults_fired < b.faults_fired || a.fault_kinds_on < b.fault_kinds_on;
  return no_worse && better;
}

class shrinker {
 public:
  shrinker(const loaded_trace& loaded, std::string invariant)
      : loaded_(loaded), invariant_(std::move(invariant)) {}

  // Runs `decisions` (forgivingly, `calm` indices without preemption or fault) under
  // `faults`; the attempt when it still ends with the invariant.
  std::optional<attempt> attempt_with(const sim::fault_profile& faults,
                                      const std::vector<sim::decision>& decisions,
                                      std::set<std::uint64_t> calm = {}) {
    ++tries_;
    sim::guided_replay chooser(decisions, std::move(calm));
    run_setup setup = loaded_.setup("shrink");
    setup.faults = faults;
    setup.stack_pool = &stacks_;
    const run_report report = run_once(setup, chooser, keep::outcome_only);
    if (!report.found || report.found->invariant != invariant_) return std::nullopt;
    return attempt{faults, report.decisions, chooser.preemption_points(), report.outcome.steps};
  }

  bool accept(attempt& best, std::optional<attempt> candidate) {
    if (!candidate || !smaller(size_of(*candidate), size_of(best))) return false;
    best = std::move(*candidate);
    return true;
  }

  attempt shrink(attempt best) {
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t kind = 0; kind < best.faults.per_million.size(); ++kind) {
        if (best.faults.per_million[kind] == 0) continue;
        sim::fault_profile fewer = best.faults;
        fewer.per_million[kind] = 0;
        progress |= accept(best, attempt_with(fewer, best.decisions));
      }
      for (std::size_t i = best.decisions.size(); i-- > 0;) {
        if (i >= best.decisions.size()) continue;
        const sim::decision& d = best.decisions[i];
        if (d.kind != sim::decision_kind::fault || d.chosen != 1) continue;
        progress |= accept(best, attempt_with(best.faults, best.decisions, {i}));
      }
      const std::vector<std::uint64_t> points = best.preemption_points;
      for (auto it = points.rbegin(); it != points.rend(); ++it) {
        if (*it >= best.decisions.size()) continue;
        progress |= accept(best, attempt_with(best.faults, best.decisions, {*it}));
      }
      progress |= shorten(best);
    }
    return best;
  }

  std::uint64_t tries() const { return tries_; }

 private:
  sim::fiber_stacks stacks_;  // one pool for every attempt
  // The shortest recorded prefix after which calm choices still reach the invariant
  // (bisection; the calm continuation makes most prefixes either work or not).
  bool shorten(attempt& best) {
    std::size_t works = best.decisions.size();
    std::size_t fails_below = 0;
    while (fails_below < works) {
      const std::size_t middle = fails_below + (works - fails_below) / 2;
      const std::vector<sim::decision> prefix(best.decisions.begin(),
                                              best.decisions.begin() + static_cast<std::ptrdiff_t>(middle));
      if (attempt_with(best.faults, prefix)) {
        works = middle;
      } else {
        fails_below = middle + 1;
      }
    }
    const std::vector<sim::decision> prefix(best.decisions.begin(),
                                            best.decisions.begin() + static_cast<std::ptrdiff_t>(works));
    return accept(best, attempt_with(best.faults, prefix));
  }

  const loaded_trace& loaded_;
  std::string invariant_;
  std::uint64_t tries_ = 0;
};

void print_size(std::ostream& out, const char* label, const size& s) {
  out << label << s.decisions << " decisions, " << s.steps << " steps, " << s.preemptions
      << " preemptions, " << s.faults_fired << " faults fired, " << s.fault_kinds_on
      << " fault kinds on\n";
}

}  // namespace

int cmd_shrink(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"}, {"-o", true}, {"--out", true}}, 1);
  if (flags.has("--help")) {
    out << shrink_help;
    return 0;
  }
  if (flags.positionals().empty()) throw usage_error("expected a trace FILE");
  const auto output = flags.has("-o") ? flags.value("-o") : flags.value("--out");
  if (!output) throw usage_error("-o OUT is required");
  check_trace_output("-o", *output);
  const loaded_trace loaded = load_trace_file(flags.positionals().front());
  if (!loaded.trace.found) {
    throw input_error(flags.positionals().front() + ": the trace has no finding to shrink");
  }
  shrinker work(loaded, loaded.trace.found->invariant);
  const auto original = work.attempt_with(loaded.trace.faults, loaded.trace.decisions);
  if (!original) {
    throw input_error(flags.positionals().front() + ": the trace does not reproduce its " +
                      loaded.trace.found->invariant + " finding");
  }
  const attempt shrunk = work.shrink(*original);

  // The shrunk run's own decisions replay strictly: prove it, and record that replay.
  sim::replay strict(shrunk.decisions, sim::replay_mode::strict);
  run_setup setup = loaded.setup("shrink");
  setup.faults = shrunk.faults;
  const run_report final_run = run_once(setup, strict);
  if (final_run.diverged || !final_run.found ||
      final_run.found->invariant != loaded.trace.found->invariant) {
    throw input_error("internal: the shrunk run did not replay strictly to the same invariant");
  }
  try {
    sim::write_trace(*output, final_run.trace);
  } catch (const sim::trace_error& e) {
    throw input_error(e.what());
  }
  print_size(out, "before: ", size_of(*original));
  print_size(out, "after:  ", size_of(shrunk));
  out << "kept " << spec::echoed(final_run.found->message, spec::message_chars_max) << "\n"
      << work.tries() << " runs tried; wrote " << spec::echoed(*output) << "\n";
  return 0;
}

}  // namespace kvsim::tools
