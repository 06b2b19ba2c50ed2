// A rank's listening port is open to anyone who can reach it. Before and between the arrival
// of its real peers, strangers connect to it: garbage bytes, a frame header announcing a huge
// payload, a connection that closes at once, one that says nothing, a hello with no key behind
// it, and the bytes of a genuine handshake recorded on another connection and replayed. Each
// is refused, logged as one line and counted; none ends the accept or holds it past its own
// handshake deadline; and the real peers link and exchange messages as if nobody had come.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "real_backend/wire/control_frame.h"
#include "real_backend/errors.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/tcp_link.h"
#include "real_backend/wire/tcp_messenger.h"
#include "tests/real_backend/test_link_key.h"

namespace kvsim::real::stranger_at_the_port_test {
namespace {

using namespace std::chrono_literals;
using testing::test_key;

constexpr core::rank_id listener_rank = 1;
constexpr auto short_handshake = 300ms;  // injected: the default (3 s) would make this slow

class refusal_lines {
 public:
  tcp_messenger::refusal_log sink() {
    return [this](const std::string& line) {
      const std::lock_guard lock(mutex_);
      lines_.push_back(line);
    };
  }
  std::vector<std::string> lines() const {
    const std::lock_guard lock(mutex_);
    return lines_;
  }
  std::size_t count_with(const std::string& part) const {
    std::size_t n = 0;
    for (const std::string& line : lines()) n += line.find(part) != std::string::npos ? 1 : 0;
    return n;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// A frame as it crosses the wire: header (length, type) and payload.
std::vector<std::uint8_t> wire_bytes(const received_frame& frame) {
  std::vector<std::uint8_t> bytes;
  const auto n = static_cast<std::uint32_t>(frame.payload.size());
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  bytes.push_back(static_cast<std::uint8_t>(frame.type));
  bytes.insert(bytes.end(), frame.payload.begin(), frame.payload.end());
  return bytes;
}

// What a stranger on the network records: a genuine rank 3 linking to a genuine rank 1 of
// the same run through a relay that keeps the connector's hello and proof.
struct recorded_handshake {
  std::vector<std::uint8_t> hello;
  std::vector<std::uint8_t> proof;
};

recorded_handshake record_a_genuine_handshake() {
  tcp_messenger genuine_acceptor(listener_rank, test_key());
  genuine_acceptor.set_refusal_log(testing::quiet);
  const std::uint16_t acceptor_port = genuine_acceptor.listen("127.0.0.1", 0);
  tcp_listener relay("127.0.0.1", 0);
  recorded_handshake recorded;
  auto accepted = std::async(std::launch::async, [&] { genuine_acceptor.accept_peers(1, 5000ms); });
  auto relayed = std::async(std::launch::async, [&] {
    std::unique_ptr<tcp_link> from_connector = relay.accept(5000ms);
    std::unique_ptr<tcp_link> to_acceptor = tcp_link::connect("127.0.0.1", acceptor_port, 5000ms);
    recorded.hello = wire_bytes(from_connector->read_for(5000ms));
    to_acceptor->write(recorded.hello);
    from_connector->write(wire_bytes(to_acceptor->read_for(5000ms)));
    recorded.proof = wire_bytes(from_connector->read_for(5000ms));
    to_acceptor->write(recorded.proof);
    accepted.get();  // the acceptor took the proof before the relay lets go of the link
  });
  tcp_messenger genuine_connector(3, test_key());
  genuine_connector.connect(listener_rank, "127.0.0.1", relay.port(), 5000ms);
  relayed.get();
  return recorded;
}

// The strangers. Each connects (so that its connection is queued in order) and then does its
// part; held ones are closed by the returned future.
std::unique_ptr<tcp_link> connect_to(std::uint16_t port) {
  return tcp_link::connect("127.0.0.1", port, 5000ms);
}

void send_garbage(std::uint16_t port) {
  const std::vector<std::uint8_t> garbage = {0x47, 0x45, 0x54, 0x20, 0x2f, 0x20, 0x48, 0x54,
                                             0x54, 0x50, 0x2f, 0x31, 0x2e, 0x31, 0x0d, 0x0a};
  connect_to(port)->write(garbage);  // an HTTP probe: its fifth byte is no frame type
}

void send_huge_length(std::uint16_t port) {
  connect_to(port)->write(std::vector<std::uint8_t>{0xf0, 0xff, 0xff, 0xff, 1});  // a 4 GiB hello
}

void connect_and_close(std::uint16_t port) { (void)connect_to(port); }

// Says nothing, and keeps the connection open well past the acceptor's handshake deadline.
std::future<void> stay_silent(std::uint16_t port) {
  auto link = std::make_shared<std::unique_ptr<tcp_link>>(connect_to(port));
  return std::async(std::launch::async, [link] {
    std::this_thread::sleep_for(3 * short_handshake);
    link->reset();
  });
}

// A hello as rank 7, with nothing behind it: the challenge is answered with a made-up proof.
void hello_without_the_key(std::uint16_t port) {
  auto link = connect_to(port);
  link->write(encode_hello({7, {}}));
  (void)link->read_for(5000ms);
  handshake_mac made_up{};
  made_up.fill(0x42);
  link->write(encode_proof(made_up));
}

// The genuine rank 3's hello and proof, replayed on a connection of its own.
void replay(std::uint16_t port, const recorded_handshake& recorded) {
  auto link = connect_to(port);
  link->write(recorded.hello);
  (void)link->read_for(5000ms);  // a fresh challenge, which the recorded proof does not answer
  link->write(recorded.proof);
}

TEST(StrangerAtThePort, TheRealPeersLinkWhileThePortIsAttacked) {
  const recorded_handshake recorded = record_a_genuine_handshake();
  const auto started = std::chrono::steady_clock::now();

  refusal_lines refused;
  tcp_messenger decode(listener_rank, test_key());
  decode.set_refusal_log(refused.sink());
  const std::uint16_t port = decode.listen("127.0.0.1", 0);
  // Two real peers, rank 0 and rank 2: the second one's arrival comes after a second wave of
  // strangers that arrived while the first was linking.
  auto accepting =
      std::async(std::launch::async, [&] { decode.accept_peers(2, 10'000ms, short_handshake); });

  // Before the first real peer arrives: every kind of stranger.
  send_garbage(port);
  send_huge_length(port);
  connect_and_close(port);
  std::future<void> silent = stay_silent(port);
  hello_without_the_key(port);
  replay(port, recorded);

  // Rank 0 arrives, queued behind them; a second wave arrives while it links.
  tcp_messenger prefill(0, test_key());
  prefill.set_refusal_log(testing::quiet);
  auto rank0 = std::async(std::launch::async,
                          [&] { prefill.connect(listener_rank, "127.0.0.1", port, 5000ms); });
  std::future<void> silent_again = stay_silent(port);
  send_huge_length(port);
  replay(port, recorded);
  connect_and_close(port);
  hello_without_the_key(port);
  send_garbage(port);
  rank0.get();

  // Rank 2 arrives last.
  tcp_messenger other(2, test_key());
  other.set_refusal_log(testing::quiet);
  other.connect(listener_rank, "127.0.0.1", port, 5000ms);
  ASSERT_NO_THROW(accepting.get());
  silent.get();
  silent_again.get();

  // The links work, both ways.
  decode.send(0, {core::control_kind::metadata, listener_rank, {42, 1}, {}, {3, 4}, {}});
  decode.send(2, {core::control_kind::metadata, listener_rank, {43, 1}, {}, {5}, {}});
  EXPECT_EQ(prefill.receive().key, (core::room_key{42, 1}));
  EXPECT_EQ(other.receive().key, (core::room_key{43, 1}));
  prefill.send(listener_rank, {core::control_kind::abort_ack, 0, {42, 1}, {}, {}, {}});
  other.send(listener_rank, {core::control_kind::abort_ack, 2, {43, 1}, {}, {}, {}});
  const core::control_message first = decode.receive();
  const core::control_message second = decode.receive();
  EXPECT_EQ(first.from + second.from, 2u);  // 0 and 2, in either order

  // Twelve strangers, twelve refusals, each for what it did.
  const std::vector<std::string> lines = refused.lines();
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  EXPECT_EQ(decode.refused_connections(), 12u) << all;
  EXPECT_EQ(lines.size(), 12u) << all;
  EXPECT_EQ(refused.count_with("unknown frame type 47"), 2u) << all;
  EXPECT_EQ(refused.count_with("payload length 4294967280 exceeds the limit of"), 2u) << all;
  EXPECT_EQ(refused.count_with("closed the connection during the handshake, before its hello"), 2u)
      << all;
  EXPECT_EQ(refused.count_with("no hello (control plane: no frame from 127.0.0.1:"), 2u) << all;
  EXPECT_EQ(refused.count_with("the peer that says it is rank 7 did not prove the run's key"), 2u)
      << all;
  EXPECT_EQ(refused.count_with("the peer that says it is rank 3 did not prove the run's key"), 2u)
      << all;
  for (const std::string& line : lines) {
    EXPECT_EQ(line.rfind("control plane: 127.0.0.1:", 0), 0u) << line;
  }
  // Two silent connections cost two handshake deadlines, not the patience.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

}  // namespace
}  // namespace kvsim::real::stranger_at_the_port_test
