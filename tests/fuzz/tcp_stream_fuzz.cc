// Fuzz target `tcp_stream`: the TCP messenger's stream framing (real_backend/tcp_messenger.h,
// tcp_link.h) on any bytes, over a real loopback connection: a peer connects, sends the input
// as it is and closes. The messenger reads the hello (tcp_link::read_for) and answers it as the
// handshake says (link_auth.h); without the run's key the input never gets further. Every
// path must end in messages or one control_plane_error line, and a closed peer must never
// leave receive waiting. Inputs over 64 KiB are skipped: they would fill the socket buffers
// before the messenger accepts.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "real_backend/errors.h"
#include "real_backend/launcher.h"
#include "real_backend/run_secret.h"
#include "real_backend/tcp_link.h"
#include "real_backend/tcp_messenger.h"
#include "tests/fuzz/fuzz_checks.h"

namespace {

constexpr std::size_t input_max = 64 * 1024;
// Loopback answers in microseconds: a wait this long means the messenger hangs.
constexpr std::chrono::milliseconds patience(5000);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvsim;
  if (size > input_max) return 0;
  // A key nobody else holds: the input can never pass the handshake, so this target fuzzes
  // the hello stage (framing, the hello's decoding, the refusal); the sealed frames after it
  // are covered by tests/real_backend/link_auth_test.cc.
  real::tcp_messenger receiver(0, real::derive_link_key(real::draw_run_secret()));
  receiver.set_refusal_log([](const std::string&) {});
  const std::uint16_t port = receiver.listen(real::loopback_address, 0);
  {
    const std::unique_ptr<real::tcp_link> sender =
        real::tcp_link::connect(real::loopback_address, port, patience);
    sender->write({data, size});
  }  // closed: the receiver reads what was sent, then the end of the stream
  try {
    receiver.accept_peers(1, patience);
  } catch (const real::control_plane_error& e) {
    fuzz::require_one_line(e.what());
    return 0;
  }
  // At most one message per 5 bytes (a frame's header), then an error or the closed link.
  for (std::size_t i = 0; i <= size / real::frame_header_bytes; ++i) {
    try {
      if (!receiver.receive_for(patience)) fuzz::finding("receive waits on a closed peer", "");
    } catch (const real::control_plane_error& e) {
      fuzz::require_one_line(e.what());
      return 0;
    }
  }
  fuzz::finding("more messages than frames fit in the input", std::to_string(size));
}
