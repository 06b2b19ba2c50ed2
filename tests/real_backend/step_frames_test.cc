// Step frames on the control plane (ranks that torchrun or srun started, launched_run.h):
// rank 0 hands rank 1 the script's steps as sealed frames on their authenticated link, and
// rank 1 answers the same way (control_step_link.h). Only the rank a messenger takes steps
// from can put a line in: a step frame from any other rank, or to a messenger that takes
// steps from nobody, is refused as hostile and closes the link; a malformed one is refused;
// whoever waits for a step learns the refusal's line, or that the peer closed its link.
#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "real_backend/wire/control_frame.h"
#include "real_backend/launch/control_step_link.h"
#include "real_backend/errors.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/wire/tcp_messenger.h"
#include "tests/real_backend/test_link_key.h"

namespace kvsim::real::step_frames_test {
namespace {

using namespace std::chrono_literals;
using testing::quiet;
using testing::test_key;

std::string thrown_by(const std::function<void()>& call) {
  try {
    call();
  } catch (const control_plane_error& e) {
    return e.what();
  }
  return "nothing thrown";
}

// What the next receive throws (a refusal), or that nothing came within 5 s: never a hang.
std::string refusal_at(tcp_messenger& wire) {
  return thrown_by([&] {
    if (!wire.receive_for(5000ms)) throw control_plane_error("nothing refused within 5 s");
  });
}

// Rank 0 listens (it drives the script) and `connector` connects: one link. Each end takes
// steps from the other when `steps` is set.
struct driver_link {
  explicit driver_link(core::rank_id connector, bool steps = true)
      : driver(0, test_key()),
        peer_end(std::make_unique<tcp_messenger>(connector, test_key())),
        peer(*peer_end) {
    driver.set_refusal_log(quiet);
    peer.set_refusal_log(quiet);
    if (steps) {
      driver.accept_steps_from(1);
      peer.accept_steps_from(0);
    }
    const std::uint16_t port = driver.listen("127.0.0.1", 0);
    auto accepted = std::async(std::launch::async, [&] { driver.accept_peers(1, 5000ms); });
    peer.connect(0, "127.0.0.1", port, 5000ms);
    accepted.get();
  }
  tcp_messenger driver;
  std::unique_ptr<tcp_messenger> peer_end;  // reset: the peer's process exits
  tcp_messenger& peer;
};

TEST(StepFrames, LinesCrossBothWaysInOrderBesideControlMessages) {
  driver_link link(1);
  control_step_link to_decode(link.driver, 1);
  control_step_link to_driver(link.peer, 0);
  ASSERT_TRUE(to_decode.write_line("region /kvsim-hp-0123456789abcdef-29500"));
  link.driver.send(1, {core::control_kind::chunk_ready, 0, {42, 0}, std::nullopt, {}, {}});
  ASSERT_TRUE(to_decode.write_line("ask 1 prealloc_and_publish 0"));
  EXPECT_EQ(to_driver.read_line(5000ms), "region /kvsim-hp-0123456789abcdef-29500");
  EXPECT_EQ(to_driver.read_line(5000ms), "ask 1 prealloc_and_publish 0");
  const auto message = link.peer.receive_for(5000ms);  // in its own inbox
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->kind, core::control_kind::chunk_ready);
  EXPECT_FALSE(to_driver.read_line(20ms).has_value());
  // A control character cannot split a line: it goes as a space.
  ASSERT_TRUE(to_driver.write_line("failed two\nlines"));
  EXPECT_EQ(to_decode.read_line(5000ms), "failed two lines");
  EXPECT_FALSE(link.driver.receive_for(20ms).has_value());  // no step in the control inbox
}

TEST(StepFrames, AStepFromARankStepsAreNotTakenFromIsRefusedAndClosesTheLink) {
  // Rank 0 takes steps from rank 1 only; a rank 2 with the run's key sends one.
  driver_link link(2, false);
  link.driver.accept_steps_from(1);  // as rank 0 of a launch; rank 2 is not its step peer
  link.peer.send_step(0, "answer 1 1");
  const std::string line = refusal_at(link.driver);
  EXPECT_NE(line.find("control plane: rank 2 (127.0.0.1:"), std::string::npos) << line;
  EXPECT_NE(line.find(") sent a step frame, which only rank 1 may send to rank 0: refused, link "
                      "closed as hostile"),
            std::string::npos)
      << line;
  EXPECT_EQ(refusal_at(link.driver), "control plane: every link of rank 0 has closed");
  EXPECT_FALSE(link.driver.receive_step_for(std::chrono::milliseconds(20)).has_value());
}

TEST(StepFrames, AMessengerThatTakesNoStepsRefusesThem) {
  driver_link link(1, false);  // as in a --ranks 2 run: steps come over the socketpair
  link.driver.send_step(1, "ask 1 abort 0");
  const std::string line = refusal_at(link.peer);
  EXPECT_NE(line.find(") sent a step frame, which rank 1 takes from nobody: refused, link closed "
                      "as hostile"),
            std::string::npos)
      << line;
}

TEST(StepFrames, TheStepReaderLearnsOfAMalformedFrameAndOfTheClose) {
  driver_link link(1);
  std::vector<std::uint8_t> bad = encode_step("ask 1 abort 0");
  bad[frame_header_bytes + 4 + 3] = '\r';
  link.driver.send_raw(1, bad);
  EXPECT_EQ(thrown_by([&] { (void)link.peer.receive_step_for(5000ms); }),
            "control plane: malformed step frame: field 'line' has control character 13 at "
            "offset 7 (from rank 0)");
  EXPECT_EQ(thrown_by([&] { (void)link.peer.receive_step_for(5000ms); }),
            "control plane: the link from rank 0 to rank 1 has closed");
}

TEST(StepFrames, APeerGoingAwayEndsTheStepReadersWait) {
  driver_link link(1);
  control_step_link from_peer(link.driver, 1);
  auto waiting = std::async(std::launch::async,
                            [&] { return thrown_by([&] { (void)from_peer.read_line(5000ms); }); });
  std::this_thread::sleep_for(50ms);
  link.peer_end.reset();  // rank 1 exits: its links close
  const std::string line = waiting.get();
  EXPECT_EQ(line.rfind("control plane: peer rank 1 (127.0.0.1:", 0), 0u) << line;
  EXPECT_NE(line.find(") closed its link to rank 0 (died?)"), std::string::npos) << line;
}

}  // namespace
}  // namespace kvsim::real::step_frames_test
