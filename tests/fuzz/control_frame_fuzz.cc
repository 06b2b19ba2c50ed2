// Fuzz target `control_frame`: the real backend's control-plane decoders
// (real_backend/control_frame.h). The first byte picks the decoder (header, hello, control,
// NCCL id), the rest is its input. Each must return or throw control_plane_error with one
// bounded line; whatever decode_control accepts must encode back to the same bytes (the wire
// format has one spelling per message).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "real_backend/control_frame.h"
#include "real_backend/errors.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvsim;
  if (size == 0) return 0;
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  try {
    switch (data[0] % 4) {
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
      default:
        (void)real::decode_id(input);
        break;
    }
  } catch (const real::control_plane_error& e) {
    fuzz::require_one_line(e.what());
  }
  return 0;
}
