#pragma once
// A run's trace file: everything needed to replay a run and to read what happened in it, in
// one self-contained JSON file. A versioned header (kvsim version, the scenario inline, core
// variant, strategy, seed, fault profile, the decision hash), the actor table, the decisions
// (which alone replay the run), the readable event log and the finding.
//
// Writes are atomic (temporary file in the same directory, fsync, rename), so a crash or a
// full disk never leaves a half-written trace under the final name. Loading a missing, bad,
// truncated, hand-edited or newer-version file throws trace_error with one line naming the
// file; it never crashes and never lets a JSON library exception escape.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/actor_name.h"
#include "sim/checker.h"
#include "sim/decision.h"
#include "sim/fault_profile.h"

namespace kvsim::sim {

struct trace {
  std::string kvsim_version;  // e.g. "0.1.0"
  // "real": recorded on real hardware (kvsim real --trace); "simulator" otherwise (the field
  // is written only for a recording).
  std::string origin = "simulator";
  nlohmann::json scenario;    // the scenario, inline (any JSON object)
  std::string variant;        // core variant name, e.g. "safe"
  std::string strategy;       // e.g. "random", "pct:3", "replay"
  // The checker families the run had attached: "all", "damage" or "rules" (written only when
  // not "all", so traces of every-checker runs read as before).
  std::string checkers = "all";
  std::uint64_t seed = 0;
  fault_profile faults;
  std::vector<actor_name> actors;  // index = actor_id
  std::vector<decision> decisions;
  std::vector<std::string> events;  // the readable event log (describe() lines)
  std::optional<finding> found;     // empty when the run found nothing
  std::uint64_t steps = 0;

  friend bool operator==(const trace&, const trace&) = default;
};

// One line, always naming the file.
class trace_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The file's content as JSON. Strings that are not valid UTF-8 are written with U+FFFD in
// place of the bad bytes, so a finding's trace is never lost to one odd byte.
nlohmann::json to_json(const trace& t);

// What a write does with a symbolic link at the path it is given.
enum class link_policy {
  // A path the user named (--trace, -o, --json): the link is followed to its final target,
  // and that file is replaced atomically in its own directory; the link stays a link.
  resolve,
  // A file kvsim names inside a directory it was given (explore --out DIR): a link there was
  // planted, and is refused; nothing is ever opened through one.
  refuse,
};

// Writes atomically through `path` + ".tmp"; on failure the temporary file is removed, an
// existing file at `path` is left as it was, and trace_error is thrown.
void write_trace(const std::filesystem::path& path, const trace& t,
                 link_policy links = link_policy::resolve);

trace load_trace(const std::filesystem::path& path);

// The atomic write under write_trace, for any text (exports, result files): a temporary file
// in the target's directory, fsync, rename over the target (sim/atomic_write.cc). A device,
// a pipe or an open descriptor (/dev/stdout, /proc/self/fd/N) is written through in place
// instead. `what` names the file's kind in the one-line trace_error.
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           std::string_view what, link_policy links = link_policy::resolve);

}  // namespace kvsim::sim
