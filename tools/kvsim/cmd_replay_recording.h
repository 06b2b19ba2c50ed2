#pragma once
// The part of `kvsim replay` for a recording from real hardware (a trace marked "origin":
// "real"): steered, never strict, optionally written as an ordinary simulator trace
// (--trace OUT) that then replays strictly: a failure seen on real hardware as a
// deterministic test.
#include <optional>
#include <ostream>
#include <string>

#include "core/variant.h"
#include "tools/kvsim/trace_input.h"

namespace kvsim::tools {

struct recording_request {
  std::string path;
  const loaded_trace& loaded;
  bool lenient = false;
  bool json = false;
  std::optional<core::variant> core_variant;
  std::optional<std::string> trace_out;  // --trace OUT
};

// Exit code as cmd_replay's: 0 the run reached the recorded finding, 1 not; usage_error for a
// strict replay of a recording.
int replay_real_recording(const recording_request& request, std::ostream& out);

}  // namespace kvsim::tools
