// Fuzz target `control_frame`: the real backend's control-plane decoders
// (real_backend/wire/control_frame.h) and what a rank does with a step line (script_request.h).
// The first byte picks the decoder, the rest is its input:
//   0 header, 1 hello, 2 control, 3 NCCL id;
//   4 a step frame's payload (decode_step), and the line it carries served as rank 1 serves
//     it (--launched): parse_script_request, then check_step_index against a scenario of two
//     requests and one gate (page42's shape);
//   5 a line as the socketpair of --ranks N hands it over (step_channel.h: the bytes up to the
//     first newline, any other byte kept), served the same way, and as a HiCache rank process
//     reads it (parse_script_request for served_script::prefetch);
//   6 a collective frame's payload (decode_collective: a rank group's members in processes of
//     their own, wire_group.h).
// Each must return or throw with one bounded line (control_plane_error from the frame
// decoders, real_backend_error from serving a line); whatever decode_control, decode_step or
// decode_collective accepts must encode back to the same bytes (the wire format has one spelling per message),
// and a request parse_script_request accepts must parse the same from the line the script
// would have written for it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "real_backend/wire/control_frame.h"
#include "real_backend/errors.h"
#include "real_backend/scripts/script_request.h"
#include "real_backend/scripts/transfer_step_names.h"
#include "spec/scenario_spec.h"
#include "tests/fuzz/fuzz_checks.h"

namespace {

using namespace kvsim;

// page42's shape: all that check_step_index reads of a scenario.
const scenarios::scenario_spec& two_requests_one_gate() {
  static const scenarios::scenario_spec spec = [] {
    scenarios::scenario_spec s;
    s.requests.resize(2);
    s.faults.gates.resize(1);
    return s;
  }();
  return spec;
}

// The line remote_rank.cc writes for `request`.
std::string line_for(const real::script_request& request) {
  std::string line = request.verb + " " + std::to_string(request.id);
  if (request.verb == "ask" || request.verb == "watch") {
    line += " " + std::string(real::to_string(request.step)) + " " + std::to_string(request.r);
  }
  return line;
}

// What a HiCache rank process (prefetch_processes.cc) does with a line before it acts on it.
void serve_prefetch(const std::string& line) {
  try {
    const real::script_request request =
        real::parse_script_request(line, real::served_script::prefetch);
    const real::script_request again =
        real::parse_script_request(line_for(request), real::served_script::prefetch);
    if (again.verb != request.verb || again.id != request.id) {
      fuzz::finding("a HiCache rank's line parses to another request once written out", line);
    }
  } catch (const real::real_backend_error& e) {
    fuzz::require_one_line(e.what());
  }
}

// What serve_until_stop (rank_process.cc) does with a line before it runs a step: each
// refusal is a real_backend_error of one line.
void serve(const std::string& line) {
  try {
    const real::script_request request = real::parse_script_request(line);
    const real::script_request again = real::parse_script_request(line_for(request));
    if (again.verb != request.verb || again.id != request.id || again.step != request.step ||
        again.r != request.r) {
      fuzz::finding("a step line parses to another request once written out", line);
    }
    if (request.verb == "ask" || request.verb == "watch") {
      real::check_step_index(two_requests_one_gate(), request.step, request.r);
    }
  } catch (const real::real_backend_error& e) {
    fuzz::require_one_line(e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvsim;
  if (size == 0) return 0;
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  try {
    switch (data[0] % 7) {
      case 0:
        (void)real::decode_header(input);
        break;
      case 1:
        (void)real::decode_hello(input);
        break;
      case 2: {
        const core::control_message message = real::decode_control(input);
        const std::vector<std::uint8_t> frame = real::encode_control(message);
        const std::span<const std::uint8_t> payload =
            std::span<const std::uint8_t>(frame).subspan(real::frame_header_bytes);
        if (!std::equal(payload.begin(), payload.end(), input.begin(), input.end())) {
          fuzz::finding("a decoded control message encodes to other bytes", "");
        }
        break;
      }
      case 3:
        (void)real::decode_id(input);
        break;
      case 4: {
        const std::string line = real::decode_step(input);
        const std::vector<std::uint8_t> frame = real::encode_step(line);
        const std::span<const std::uint8_t> payload =
            std::span<const std::uint8_t>(frame).subspan(real::frame_header_bytes);
        if (!std::equal(payload.begin(), payload.end(), input.begin(), input.end())) {
          fuzz::finding("a decoded step frame encodes to other bytes", line);
        }
        serve(line);
        break;
      }
      case 5: {
        const std::string bytes(input.begin(), input.end());
        serve(bytes.substr(0, bytes.find('\n')));
        serve_prefetch(bytes.substr(0, bytes.find('\n')));
        break;
      }
      default: {
        const real::collective_note note = real::decode_collective(input);
        const std::vector<std::uint8_t> frame = real::encode_collective(note);
        const std::span<const std::uint8_t> payload =
            std::span<const std::uint8_t>(frame).subspan(real::frame_header_bytes);
        if (!std::equal(payload.begin(), payload.end(), input.begin(), input.end())) {
          fuzz::finding("a decoded collective note encodes to other bytes", note.line);
        }
        break;
      }
    }
  } catch (const real::control_plane_error& e) {
    fuzz::require_one_line(e.what());
  }
  return 0;
}
