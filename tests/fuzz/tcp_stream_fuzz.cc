// Fuzz target `tcp_stream`: the control plane's stream framing and handshake (real_backend/
// tcp_link.h, link_auth.h) on any bytes, over a real loopback connection: a stranger connects
// to a listening rank, sends the input as it is and closes. The rank reads the hello
// (tcp_link::read_for) and answers it as the handshake says, as it does for every connection
// it accepts (peer_acceptor.h); without the run's key the input never gets further. Every
// path must end in one control_plane_error line, within the handshake's deadline, and the
// input must never pass. Inputs over 64 KiB are skipped: they would fill the socket buffers
// before the rank accepts.
//
// The acceptor's loop itself (a refused connection is followed by the next accept, until the
// patience ends) is not run here: each input would cost the whole patience. It is covered by
// tests/real_backend/stranger_at_the_port_test.cc.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "real_backend/errors.h"
#include "real_backend/launch/launcher.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/wire/tcp_link.h"
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
  const real::link_key key = real::derive_link_key(real::draw_run_secret());
  real::tcp_listener listener(real::loopback_address, 0);
  {
    const std::unique_ptr<real::tcp_link> sender =
        real::tcp_link::connect(real::loopback_address, listener.port(), patience);
    sender->write({data, size});
  }  // closed: the rank reads what was sent, then the end of the stream
  try {
    const std::unique_ptr<real::tcp_link> link = listener.accept(patience);
    (void)real::authenticate_acceptor(*link, key, 0, patience);
  } catch (const real::control_plane_error& e) {
    fuzz::require_one_line(e.what());
    return 0;
  }
  fuzz::finding("a connection without the run's key passed the handshake", std::to_string(size));
}
