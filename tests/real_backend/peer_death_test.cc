// A peer that dies is named as one that went away, at once, not as an attacker nor as a
// wait that ran out: its authenticated link closing (a process's sockets are closed by the
// kernel when it dies) or being reset (it died with bytes unread) is "peer rank R closed its
// link (died?)", thrown by the next receive after what it sent, never logged as a refusal.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "real_backend/errors.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/tcp_link.h"
#include "real_backend/wire/tcp_messenger.h"
#include "tests/real_backend/test_link_key.h"

namespace kvsim::real::peer_death_test {
namespace {

using namespace std::chrono_literals;
using testing::test_key;

struct logged_lines {
  std::mutex mutex;
  std::vector<std::string> lines;
  tcp_messenger::refusal_log sink() {
    return [this](const std::string& line) {
      const std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
  std::size_t size() {
    const std::lock_guard lock(mutex);
    return lines.size();
  }
};

// What receive() throws within `within`, and how long it took.
struct thrown {
  std::string line;
  bool gone = false;  // peer_gone, not another control_plane_error
  std::chrono::milliseconds after{0};
};

thrown what_receive_throws(tcp_messenger& wire, std::chrono::milliseconds within) {
  const auto start = std::chrono::steady_clock::now();
  thrown t;
  try {
    while (std::chrono::steady_clock::now() - start < within) (void)wire.receive_for(50ms);
    t.line = "nothing thrown";
  } catch (const peer_gone& e) {
    t.line = e.what();
    t.gone = true;
  } catch (const control_plane_error& e) {
    t.line = e.what();
  }
  t.after = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start);
  return t;
}

TEST(PeerDeath, APeerWhoseLinkClosesIsNamedAsGoneAtOnce) {
  logged_lines refusals;
  tcp_messenger decode(1, test_key());
  decode.set_refusal_log(refusals.sink());
  const std::uint16_t port = decode.listen("127.0.0.1", 0);
  auto prefill = std::make_unique<tcp_messenger>(0, test_key());
  auto accepted = std::async(std::launch::async, [&] { decode.accept_peers(1, 5000ms); });
  prefill->connect(1, "127.0.0.1", port, 5000ms);
  accepted.get();
  prefill->send(1, {core::control_kind::abort_ack, 0, {9, 1}, {}, {}, {}});
  prefill.reset();  // its process dies: the kernel closes its socket

  EXPECT_EQ(decode.receive().key, (core::room_key{9, 1}));  // what it sent before still counts
  const thrown t = what_receive_throws(decode, 10s);
  EXPECT_TRUE(t.gone) << t.line;
  EXPECT_EQ(t.line.rfind("control plane: peer rank 0 (127.0.0.1:", 0), 0u) << t.line;
  EXPECT_NE(t.line.find(") closed its link to rank 1 (died?)"), std::string::npos) << t.line;
  EXPECT_LT(t.after, 1000ms);
  EXPECT_EQ(refusals.size(), 0u) << "a peer that died was logged as refused";
}

TEST(PeerDeath, APeerWhoseLinkIsResetIsNamedAsGoneNotAsBroken) {
  logged_lines refusals;
  tcp_messenger decode(1, test_key());
  decode.set_refusal_log(refusals.sink());
  const std::uint16_t port = decode.listen("127.0.0.1", 0);
  auto accepted = std::async(std::launch::async, [&] { decode.accept_peers(1, 5000ms); });
  std::unique_ptr<tcp_link> raw = tcp_link::connect("127.0.0.1", port, 5000ms);
  const link_session session = authenticate_connector(*raw, test_key(), 0, 1, 5000ms);
  accepted.get();
  // Decode writes to it and it never reads: closed with bytes unread, its end resets the
  // connection, as a process killed in the middle of its work does.
  decode.send(0, {core::control_kind::metadata, 1, {5, 1}, {}, {1, 2}, {}});
  std::this_thread::sleep_for(50ms);
  raw.reset();

  const thrown t = what_receive_throws(decode, 10s);
  EXPECT_TRUE(t.gone) << t.line;
  EXPECT_EQ(t.line.rfind("control plane: peer rank 0 (127.0.0.1:", 0), 0u) << t.line;
  EXPECT_NE(t.line.find(") closed its link to rank 1 (died?): control plane: the connection to "
                        "127.0.0.1:"),
            std::string::npos)
      << t.line;
  EXPECT_NE(t.line.find(" was reset"), std::string::npos) << t.line;
  EXPECT_LT(t.after, 1000ms);
  EXPECT_EQ(refusals.size(), 0u) << "a peer that died was logged as refused";
}

// The connecting side: a listener that dies in the middle of the handshake is a peer gone,
// not a peer that failed to prove the key.
TEST(PeerDeath, AnAcceptorThatClosesBeforeItsChallengeIsGoneNotRefused) {
  tcp_listener listener("127.0.0.1", 0);
  auto dies = std::async(std::launch::async, [&] {
    std::unique_ptr<tcp_link> link = listener.accept(5000ms);
    (void)link->read_for(5000ms);  // the hello; then it dies
  });
  tcp_messenger prefill(0, test_key());
  prefill.set_refusal_log(testing::quiet);
  std::string line = "nothing thrown";
  bool gone = false;
  try {
    prefill.connect(1, "127.0.0.1", listener.port(), 5000ms);
  } catch (const peer_gone& e) {
    line = e.what();
    gone = true;
  } catch (const control_plane_error& e) {
    line = e.what();
  }
  dies.get();
  EXPECT_TRUE(gone) << line;
  EXPECT_NE(line.find("closed the connection during the handshake, before its challenge "
                      "(died?) (rank 1)"),
            std::string::npos)
      << line;
}

}  // namespace
}  // namespace kvsim::real::peer_death_test
