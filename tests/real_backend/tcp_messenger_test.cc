// The control plane over loopback TCP: prefill and decode endpoints in two threads exchange
// every message kind (metadata, ABORT with its token, ABORT_ACK, status, chunk-ready) in
// order; the NCCL id goes from rank 0 to every peer; malformed and truncated frames from a
// peer are refused with one line instead of being skipped or crashing the reader.
#include "real_backend/wire/tcp_messenger.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "real_backend/wire/control_frame.h"
#include "real_backend/errors.h"
#include "real_backend/wire/id_exchange.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/run_secret.h"
#include "tests/real_backend/test_link_key.h"

namespace kvsim::real::tcp_messenger_test {
namespace {

using namespace std::chrono_literals;
using testing::quiet;
using testing::test_key;

constexpr core::rank_id prefill = 0;
constexpr core::rank_id decode = 1;

core::abort_token token_for(core::room_key key) {
  core::abort_token t;
  t.key = key;
  t.issuer = decode;
  t.nonce = 77;
  t.mac.fill(0x5a);
  return t;
}

// Decode listens, prefill connects: the two ends of one control link.
struct link_pair {
  link_pair() : prefill_end(prefill, test_key()), decode_end(decode, test_key()) {
    prefill_end.set_refusal_log(quiet);
    decode_end.set_refusal_log(quiet);
    const std::uint16_t port = decode_end.listen("127.0.0.1", 0);
    auto accepted = std::async(std::launch::async, [&] { decode_end.accept_peers(1, 5000ms); });
    prefill_end.connect(decode, "127.0.0.1", port, 5000ms);
    accepted.get();
  }
  tcp_messenger prefill_end;
  tcp_messenger decode_end;
};

TEST(TcpMessenger, MessagesOfEveryKindCrossInOrderBetweenTwoThreads) {
  link_pair link;
  const core::room_key key{42, 1};
  // Decode's side of the protocol runs in its own thread: metadata out, ABORT out, then it
  // waits for the drain-ACK and the status.
  auto decode_side = std::async(std::launch::async, [&] {
    link.decode_end.send(prefill,
                         {core::control_kind::metadata, decode, key, std::nullopt, {3, 4}, {}});
    link.decode_end.send(prefill, {core::control_kind::abort, decode, key, token_for(key), {}, {}});
    std::vector<core::control_message> got;
    for (int i = 0; i < 3; ++i) got.push_back(link.decode_end.receive());
    return got;
  });
  const core::control_message metadata = link.prefill_end.receive();
  EXPECT_EQ(metadata.kind, core::control_kind::metadata);
  EXPECT_EQ(metadata.from, decode);
  EXPECT_EQ(metadata.pages, (std::vector<core::page_index>{3, 4}));
  const core::control_message abort = link.prefill_end.receive();
  EXPECT_EQ(abort.kind, core::control_kind::abort);
  ASSERT_TRUE(abort.token.has_value());
  EXPECT_EQ(*abort.token, token_for(key));
  link.prefill_end.send(decode, {core::control_kind::abort_ack, prefill, key, abort.token, {}, {}});
  link.prefill_end.send(
      decode,
      {core::control_kind::status, prefill, key, std::nullopt, {}, core::kv_status::failed});
  link.prefill_end.send(decode,
                        {core::control_kind::chunk_ready, prefill, {43, 0}, std::nullopt, {}, {}});
  const std::vector<core::control_message> got = decode_side.get();
  EXPECT_EQ(got[0].kind, core::control_kind::abort_ack);
  EXPECT_EQ(got[0].token, token_for(key));
  EXPECT_EQ(got[1].kind, core::control_kind::status);
  EXPECT_EQ(got[1].status, core::kv_status::failed);
  EXPECT_EQ(got[2].kind, core::control_kind::chunk_ready);
  EXPECT_EQ(got[2].key, (core::room_key{43, 0}));
}

TEST(TcpMessenger, ReceiveForTimesOutEmptyAndSendToAStrangerIsRefused) {
  link_pair link;
  EXPECT_FALSE(link.decode_end.receive_for(20ms).has_value());
  EXPECT_FALSE(link.decode_end.try_receive().has_value());
  try {
    link.prefill_end.send(7, {});
    FAIL() << "sent to a rank without a link";
  } catch (const control_plane_error& e) {
    EXPECT_STREQ(e.what(), "control plane: rank 0 has no link to rank 7");
  }
}

TEST(TcpMessenger, AMalformedFrameIsRefusedWithOneLineNamingThePeer) {
  link_pair link;
  std::vector<std::uint8_t> bad =
      encode_control({core::control_kind::metadata, prefill, {1, 0}, {}, {}, {}});
  bad[frame_header_bytes] = 42;  // no such control kind
  link.prefill_end.send_raw(decode, bad);
  try {
    (void)link.decode_end.receive();
    FAIL() << "a malformed frame was accepted";
  } catch (const control_plane_error& e) {
    EXPECT_STREQ(e.what(),
                 "control plane: malformed control frame: unknown control kind 42 (from rank 0)");
  }
}

TEST(TcpMessenger, AFrameCutShortByAClosedConnectionIsRefused) {
  tcp_messenger decode_end(decode, test_key());
  decode_end.set_refusal_log(quiet);
  const std::uint16_t port = decode_end.listen("127.0.0.1", 0);
  {
    auto raw = std::async(std::launch::async, [&] {
      auto link = tcp_link::connect("127.0.0.1", port, 5000ms);
      const link_session session =
          authenticate_connector(*link, test_key(), prefill, decode, 5000ms);
      frame_seal seal(session.send);
      const std::vector<std::uint8_t> frame = seal.seal(
          encode_control({core::control_kind::metadata, prefill, {1, 0}, {}, {1, 2, 3}, {}}));
      link->write(std::span(frame).first(frame.size() - 3));  // then the peer goes away
    });
    decode_end.accept_peers(1, 5000ms);
    raw.get();
  }
  try {
    (void)decode_end.receive();
    FAIL() << "a truncated frame was accepted";
  } catch (const control_plane_error& e) {
    EXPECT_NE(std::string(e.what()).find("control plane: truncated control frame from 127.0.0.1:"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("(from rank 0)"), std::string::npos) << e.what();
  }
  // Nothing is left to read and every link is closed: that, too, is one line.
  try {
    (void)decode_end.receive();
    FAIL() << "receive on closed links returned";
  } catch (const control_plane_error& e) {
    EXPECT_STREQ(e.what(), "control plane: every link of rank 1 has closed");
  }
}

TEST(TcpMessenger, ConnectingToNobodyGivesUpWithOneLine) {
  std::uint16_t unused = 0;
  {
    tcp_listener probe("127.0.0.1", 0);
    unused = probe.port();
  }
  tcp_messenger lonely(prefill, test_key());
  try {
    lonely.connect(decode, "127.0.0.1", unused, 200ms);
    FAIL() << "connected to a closed port";
  } catch (const control_plane_error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "control plane: timed out: waited 0.2 s for rank 1 to accept a connection at "
                  "127.0.0.1:" +
                  std::to_string(unused) + " (last attempt: "),
              std::string::npos)
        << e.what();
  }
}

TEST(IdExchange, RankZeroHandsTheSameIdToEveryPeer) {
  id_blob id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(255 - i);
  id_server server("127.0.0.1", 0, test_key());
  const std::uint16_t port = server.port();
  auto served = std::async(std::launch::async, [&] { server.serve(id, 3, 5000ms); });
  std::vector<std::future<id_blob>> peers;
  for (core::rank_id rank = 1; rank <= 3; ++rank) {
    peers.push_back(std::async(
        std::launch::async, [=] { return fetch_id("127.0.0.1", port, rank, test_key(), 5000ms); }));
  }
  for (auto& p : peers) EXPECT_EQ(p.get(), id);
  served.get();
}

TEST(IdExchange, ADuplicateRankIsRefused) {
  id_server server("127.0.0.1", 0, test_key());
  const std::uint16_t port = server.port();
  auto served = std::async(std::launch::async, [&] { server.serve(id_blob{}, 2, 5000ms); });
  EXPECT_NO_THROW((void)fetch_id("127.0.0.1", port, 1, test_key(), 5000ms));
  // The second peer also claims rank 1: the server refuses it (and so never answers it).
  auto second = std::async(std::launch::async, [&] {
    try {
      (void)fetch_id("127.0.0.1", port, 1, test_key(), 2000ms);
    } catch (const control_plane_error&) {
    }
  });
  try {
    served.get();
    FAIL() << "a duplicate rank was served";
  } catch (const control_plane_error& e) {
    EXPECT_NE(std::string(e.what()).find("claims rank 1, which already has the id"),
              std::string::npos)
        << e.what();
  }
  second.get();
}

// The NCCL id lets its holder join the communicator: a peer without the run's key gets
// nothing, and rank 0 refuses it, goes on accepting, and says so when its patience ends.
TEST(IdExchange, APeerWithoutTheKeyGetsNoId) {
  id_server server("127.0.0.1", 0, test_key());
  const std::uint16_t port = server.port();
  auto served = std::async(std::launch::async, [&] { server.serve(id_blob{}, 1, 1000ms); });
  const link_key other = derive_link_key(draw_run_secret());
  try {
    (void)fetch_id("127.0.0.1", port, 1, other, 5000ms);
    FAIL() << "an id went to a peer without the key";
  } catch (const control_plane_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 did not prove the run's key"), std::string::npos)
        << e.what();
  }
  try {
    served.get();
    FAIL() << "rank 0 served a peer without the key";
  } catch (const control_plane_error& e) {
    EXPECT_NE(std::string(e.what()).find("control plane: handshake failed: rank 0 waited 1 s on "
                                         "port " +
                                         std::to_string(port)),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("none of the 1 connection(s) it accepted proved the "
                                         "run's key (the last: 127.0.0.1:"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("before its proof (it has another run's key, or it died)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kvsim::real::tcp_messenger_test
