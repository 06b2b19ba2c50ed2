#pragma once
// Strategies decide; the world asks. Every nondeterministic choice of a run goes through
// one strategy, so that swapping the strategy (random walk, PCT, replay) is the only thing
// that changes between a search and a reproduction.
#include <cstdint>
#include <optional>
#include <string>

#include "sim/decision.h"

namespace kvsim::sim {

// Why a replay stopped fitting its recording: the first mismatch, with both sides.
struct divergence {
  std::uint64_t decision_index = 0;
  std::string expected;  // what the recording says
  std::string actual;    // what the run asked for
};

class strategy {
 public:
  virtual ~strategy() = default;
  virtual std::string name() const = 0;
  // An index below request.options.
  virtual std::uint32_t choose(const decision_request& request) = 0;
  // The run ended after `decisions_taken` decisions.
  virtual void on_run_end(std::uint64_t /*decisions_taken*/) {}
  // True once the strategy wants the run over (a search that knows the rest is redundant):
  // the world stops at its next schedule decision, with no finding.
  virtual bool abandoned() const { return false; }
  // True when the strategy reads the step log (sim/step_log.h): the world then keeps it.
  virtual bool wants_step_log() const { return false; }
  // False when choose() reads only a schedule request's count of options, never
  // request.subjects (the random walk): the world then counts the options instead of listing
  // them, which in a world with many ready actors was a list of dozens built per decision.
  virtual bool reads_subjects() const { return true; }
  // Set by replay strategies when the run no longer fits the recording.
  const std::optional<divergence>& diverged() const { return divergence_; }

 protected:
  std::optional<divergence> divergence_;
};

}  // namespace kvsim::sim
