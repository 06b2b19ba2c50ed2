// The control plane against a hostile peer on loopback: every link proves the run's key at its
// hello, every frame after it is sealed, and the `from` of every frame is the link's
// authenticated rank. The attacks, each refused, logged as one line and never delivered: a peer
// without the key, a flipped byte in a sealed frame, a replayed frame, and a peer whose hello
// said rank 1 sending a drain-ACK as rank 2, which against the safe core would have freed
// decode's pages before rank 2 acknowledged.
#include "real_backend/wire/link_auth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "core/abort_token.h"
#include "core/decode_receiver.h"
#include "core/page_ledger.h"
#include "real_backend/wire/control_frame.h"
#include "real_backend/errors.h"
#include "real_backend/host/event_log.h"
#include "real_backend/wire/frame_seal.h"
#include "real_backend/peers_in_process.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/host/steady_clock_port.h"
#include "real_backend/wire/tcp_messenger.h"
#include "real_backend/wire/token_epoch.h"

namespace kvsim::real::link_auth_test {
namespace {

using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The refusal lines a messenger logs (its reader threads log too: locked).
class refusals {
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

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

std::string thrown_by(const std::function<void()>& call) {
  try {
    call();
  } catch (const control_plane_error& e) {
    return e.what();
  }
  return "nothing thrown";
}

// A raw connection from `self` that has passed the handshake (the link itself is left
// unsealed, so that a test can put any bytes on the wire) and the keys it agreed.
struct raw_peer {
  std::unique_ptr<tcp_link> link;
  link_session session;
};

raw_peer connect_raw(std::uint16_t port, const link_key& key, core::rank_id self,
                     core::rank_id peer) {
  raw_peer raw;
  raw.link = tcp_link::connect("127.0.0.1", port, 5000ms);
  raw.session = authenticate_connector(*raw.link, key, self, peer, 5000ms);
  return raw;
}

TEST(LinkAuth, APeerWithoutTheKeyIsRefusedAtTheHello) {
  const link_key key = derive_link_key(draw_run_secret());
  const link_key other = derive_link_key(draw_run_secret());
  refusals logged;
  tcp_messenger decode(1, key);
  decode.set_refusal_log(logged.sink());
  const std::uint16_t port = decode.listen("127.0.0.1", 0);
  // The intruder says hello as rank 0, ignores the acceptor's proof, and answers the
  // challenge with a proof made under a key of its own.
  auto intruder = std::async(std::launch::async, [&] {
    auto link = tcp_link::connect("127.0.0.1", port, 5000ms);
    link->write(encode_hello({0, {}}));
    const received_frame challenge = link->read_for(5000ms);
    EXPECT_EQ(challenge.type, frame_type::challenge);
    handshake_mac forged{};
    forged.fill(0x42);
    link->write(encode_proof(forged));
    // Then the intruder's message; the acceptor must never read it.
    link->write(encode_control({core::control_kind::abort_ack, 0, {1, 0}, {}, {}, {}}));
  });
  // Refused, logged and counted; the acceptor goes on accepting until its patience ends, and
  // then says that no connection proved the key.
  const std::string line = thrown_by([&] { decode.accept_peers(1, 500ms); });
  intruder.get();
  ASSERT_EQ(logged.lines().size(), 1u);
  EXPECT_TRUE(contains(logged.lines()[0],
                       "failed authentication at the hello: the peer that says it is "
                       "rank 0 did not prove the run's key; link closed (1 refused so far)"))
      << logged.lines()[0];
  EXPECT_TRUE(contains(line, "control plane: handshake failed: rank 1 waited 0.5 s on port " +
                                 std::to_string(port) +
                                 " for 1 peer(s), 0 of them authenticated, and none of the 1 "
                                 "connection(s) it accepted proved the run's key (the last: "))
      << line;
  EXPECT_EQ(decode.refused_connections(), 1u);
  EXPECT_EQ(thrown_by([&] { decode.send(0, {}); }), "control plane: rank 1 has no link to rank 0");

  // A whole messenger with another run's key: both ends refuse the link.
  refusals outsider_log;
  tcp_messenger outsider(0, other);
  outsider.set_refusal_log(outsider_log.sink());
  auto accepted = std::async(std::launch::async,
                             [&] { return thrown_by([&] { decode.accept_peers(1, 500ms); }); });
  const std::string connect_line =
      thrown_by([&] { outsider.connect(1, "127.0.0.1", port, 5000ms); });
  EXPECT_TRUE(contains(connect_line, "rank 1 did not prove the run's key; link closed"))
      << connect_line;
  const std::string accept_line = accepted.get();
  EXPECT_TRUE(contains(accept_line, "control plane: handshake failed")) << accept_line;
  EXPECT_TRUE(contains(accept_line, "before its proof (it has another run's key, or it died)"))
      << accept_line;
  EXPECT_EQ(logged.lines().size(), 2u);
  EXPECT_EQ(outsider_log.lines().size(), 1u);
}

TEST(LinkAuth, ALinkWithTheKeyCarriesMessagesSealed) {
  const link_key key = derive_link_key(draw_run_secret());
  tcp_messenger decode(1, key);
  const std::uint16_t port = decode.listen("127.0.0.1", 0);
  // A raw peer with the key: what it sends is sealed, so the wire never shows the message.
  auto accepted = std::async(std::launch::async, [&] { decode.accept_peers(1, 5000ms); });
  raw_peer peer = connect_raw(port, key, 0, 1);
  accepted.get();
  const std::vector<std::uint8_t> plain =
      encode_control({core::control_kind::metadata, 0, {0x1122334455667788ULL, 3}, {}, {5}, {}});
  frame_seal seal(peer.session.send);
  const std::vector<std::uint8_t> sealed = seal.seal(plain);
  EXPECT_EQ(sealed.size(), plain.size() + seal_tag_bytes);
  EXPECT_EQ(std::search(sealed.begin(), sealed.end(), plain.begin() + frame_header_bytes + 5,
                        plain.begin() + frame_header_bytes + 13),
            sealed.end())
      << "the room id is readable on the wire";
  peer.link->write(sealed);
  const core::control_message got = decode.receive();
  EXPECT_EQ(got.key, (core::room_key{0x1122334455667788ULL, 3}));
  EXPECT_EQ(got.pages, (std::vector<core::page_index>{5}));
}

TEST(LinkAuth, ATamperedFrameIsRefused) {
  const link_key key = derive_link_key(draw_run_secret());
  refusals logged;
  tcp_messenger decode(1, key);
  decode.set_refusal_log(logged.sink());
  const std::uint16_t port = decode.listen("127.0.0.1", 0);
  auto accepted = std::async(std::launch::async, [&] { decode.accept_peers(1, 5000ms); });
  raw_peer peer = connect_raw(port, key, 0, 1);
  accepted.get();
  frame_seal seal(peer.session.send);
  std::vector<std::uint8_t> frame =
      seal.seal(encode_control({core::control_kind::abort_ack, 0, {7, 1}, {}, {}, {}}));
  frame[frame_header_bytes + 6] ^= 0x01;  // one bit of the sealed room id
  peer.link->write(frame);
  const std::string line = thrown_by([&] { (void)decode.receive(); });
  EXPECT_TRUE(contains(line, "control plane: frame 0 from 127.0.0.1:")) << line;
  EXPECT_TRUE(contains(line,
                       " failed authentication (altered, replayed, reordered or sealed under "
                       "another key): refused, link closed (from rank 0)"))
      << line;
  ASSERT_EQ(logged.lines().size(), 1u);
  EXPECT_EQ(logged.lines()[0], line);
  // Nothing of it was delivered, and the link is closed: nothing later is believed.
  EXPECT_EQ(thrown_by([&] { (void)decode.receive(); }),
            "control plane: every link of rank 1 has closed");
}

TEST(LinkAuth, AReplayedOrReorderedFrameIsRefused) {
  const link_key key = derive_link_key(draw_run_secret());
  refusals logged;
  tcp_messenger decode(1, key);
  decode.set_refusal_log(logged.sink());
  const std::uint16_t port = decode.listen("127.0.0.1", 0);
  auto accepted = std::async(std::launch::async, [&] { decode.accept_peers(1, 5000ms); });
  raw_peer peer = connect_raw(port, key, 0, 1);
  accepted.get();
  frame_seal seal(peer.session.send);
  const std::vector<std::uint8_t> frame =
      seal.seal(encode_control({core::control_kind::abort_ack, 0, {7, 1}, {}, {}, {}}));
  peer.link->write(frame);
  peer.link->write(frame);  // the same bytes again: a captured ACK replayed
  EXPECT_EQ(decode.receive().key, (core::room_key{7, 1}));
  const std::string line = thrown_by([&] { (void)decode.receive(); });
  EXPECT_TRUE(contains(line, "frame 1 from 127.0.0.1:")) << line;
  EXPECT_TRUE(contains(line, "failed authentication")) << line;
  EXPECT_EQ(logged.lines().size(), 1u);
}

// A drain-ACK of `token` from `from`, proven under its link's key to `to` (core/message_proof.h).
core::control_message proven_ack(const core::cluster_key& token_key, core::rank_id from, core::rank_id to,
                                 core::room_key room, const core::abort_token& token) {
  core::control_message ack{core::control_kind::abort_ack, from, room, token, {}, {}};
  ack.proof = core::message_mac(core::derive_link_key(token_key, from, to)).sign(ack, to);
  return ack;
}

// Decode's loop: every message it receives goes to the core, until the link refuses one (its
// line returned) or 5 s pass; then whatever came after it, too.
std::string deliver_until_refused(tcp_messenger& wire, core::decode_receiver& receiver) {
  std::string refusal;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (refusal.empty() && std::chrono::steady_clock::now() < deadline) {
    try {
      if (auto m = wire.receive_for(100ms)) receiver.on_message(*m);
    } catch (const control_plane_error& e) {
      refusal = e.what();
    }
  }
  while (auto m = wire.try_receive()) receiver.on_message(*m);
  return refusal;
}

// The spoofing attack. Decode (rank 0, the safe core) aborts a request fed by prefill ranks 1
// and 2, and sends each its token. Rank 1 drain-ACKs honestly, then sends a second ACK on its
// own link claiming to be rank 2, with rank 2's token (which it could read off the wire
// while the control plane was in the clear). Rank 2 has not drained: decode must not free.
TEST(LinkAuth, ASpoofingPeerIsRefusedAndTheSafeCoresPagesStayHeld) {
  const run_secret secret = draw_run_secret();
  const link_key key = derive_link_key(secret);
  const core::cluster_key token_key = derive_token_key(secret);
  constexpr core::rank_id decode_rank = 0;
  constexpr core::rank_id honest_rank = 2;
  constexpr core::rank_id spoofer_rank = 1;
  const core::room_key room{42, 1};

  refusals logged;
  tcp_messenger wire(decode_rank, key);
  wire.set_refusal_log(logged.sink());
  tcp_messenger spoofer(spoofer_rank, key);
  tcp_messenger honest(honest_rank, key);
  const std::uint16_t port = wire.listen("127.0.0.1", 0);
  auto accepted = std::async(std::launch::async, [&] { wire.accept_peers(2, 5000ms); });
  spoofer.connect(decode_rank, "127.0.0.1", port, 5000ms);
  honest.connect(decode_rank, "127.0.0.1", port, 5000ms);
  accepted.get();

  event_log log;
  steady_clock_port clock;
  peers_in_process peers;
  core::page_ledger ledger(decode_rank, 8, log);
  core::abort_token_issuer issuer(decode_rank, token_key, draw_token_epoch(), log);
  core::abort_token_verifier tokens(decode_rank, token_key, log);
  core::decode_receiver receiver(decode_rank, {wire, clock, log, peers}, {ledger, issuer, tokens},
                                 core::variant::safe());
  const auto pages = receiver.prealloc(room, 2, {spoofer_rank, honest_rank});
  ASSERT_TRUE(pages.has_value());
  receiver.publish(room);
  receiver.abort(room, std::nullopt);

  // Each prefill rank gets its metadata, then its ABORT and token.
  const auto abort_to = [&](tcp_messenger& prefill) {
    for (;;) {
      const core::control_message m = prefill.receive();
      if (m.kind == core::control_kind::abort) return m;
    }
  };
  const core::control_message spoofer_abort = abort_to(spoofer);
  const core::control_message honest_abort = abort_to(honest);
  ASSERT_TRUE(spoofer_abort.token && honest_abort.token);

  // Its own drain-ACK, proven under its link's key (core/message_proof.h), counts.
  spoofer.send(decode_rank, proven_ack(token_key, spoofer_rank, decode_rank, room, *spoofer_abort.token));
  spoofer.send(decode_rank,
               {core::control_kind::abort_ack, honest_rank, room, honest_abort.token, {}, {}});

  const std::string refusal = deliver_until_refused(wire, receiver);

  // The pages stay held: the abort still waits for rank 2.
  EXPECT_TRUE(receiver.aborting(room));
  EXPECT_FALSE(receiver.finished(room));
  for (const core::page_index page : *pages) {
    EXPECT_EQ(ledger.owner_of(page), room) << "page " << page << " was freed";
  }
  EXPECT_TRUE(contains(refusal, "the link of rank 1 (127.0.0.1:")) << refusal;
  EXPECT_TRUE(contains(refusal,
                       ") carried a ABORT_ACK claiming to be from rank 2: refused, "
                       "link closed as hostile"))
      << refusal;
  EXPECT_EQ(logged.lines(), std::vector<std::string>{refusal});

  // Rank 2's own drain-ACK, on its own link and with its proof, is what frees them.
  honest.send(decode_rank, proven_ack(token_key, honest_rank, decode_rank, room, *honest_abort.token));
  receiver.on_message(wire.receive());
  EXPECT_TRUE(receiver.finished(room));
  for (const core::page_index page : *pages) EXPECT_EQ(ledger.owner_of(page), std::nullopt);
}

TEST(LinkAuth, AConnectorRequiresTheRankItMeantToReach) {
  const link_key key = derive_link_key(draw_run_secret());
  tcp_messenger impostor(3, key);  // holds the key, but is not rank 1
  impostor.set_refusal_log([](const std::string&) {});
  const std::uint16_t port = impostor.listen("127.0.0.1", 0);
  auto accepted = std::async(std::launch::async,
                             [&] { return thrown_by([&] { impostor.accept_peers(1, 300ms); }); });
  tcp_messenger prefill(0, key);
  prefill.set_refusal_log([](const std::string&) {});
  const std::string line = thrown_by([&] { prefill.connect(1, "127.0.0.1", port, 5000ms); });
  EXPECT_TRUE(contains(line, "it says it is rank 3, not rank 1; link closed")) << line;
  (void)accepted.get();
}

}  // namespace
}  // namespace kvsim::real::link_auth_test
