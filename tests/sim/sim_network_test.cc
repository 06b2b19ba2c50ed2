// The control plane's adversary: with replay and forgery on, an earlier message arrives again
// and tampered copies of token-carrying messages arrive beside the genuine one; a verifier
// accepts the genuine ABORT once and refuses every replayed and tampered copy.
#include "sim/sim_network.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "core/abort_token.h"
#include "sim/search/random_walk.h"

namespace kvsim::sim::sim_network_test {
namespace {

struct null_sink final : core::event_sink {
  void emit(const core::event&) override {}
};

core::cluster_key test_key() {
  core::cluster_key key;
  for (std::size_t i = 0; i < key.bytes.size(); ++i) key.bytes[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return key;
}

struct delivered {
  std::size_t messages = 0;
  std::size_t accepted = 0;
  std::size_t with_other_key = 0;  // the message's own (room, generation) changed
  std::map<std::string, std::size_t> rejections;
};

// Decode rank 1 sends ABORTs for two generations of room 5 to prefill rank 0, whose verifier
// judges everything that arrives. With `second_peer`, decode rank 2 first sends an ABORT of
// room 9, so that prefill rank 0 has another peer an adversary can relay a token through.
// `cluster`: the cluster's key, which the issuers sign and the verifier checks with.
delivered run_with(fault_profile profile, std::uint64_t seed, bool second_peer = false,
                   const core::cluster_key& cluster = test_key()) {
  random_walk chooser(seed);
  world w(chooser, world_config{20'000, 64 * 1024, profile});
  sim_network network(w);
  null_sink sink;
  core::abort_token_issuer issuer(1, cluster, 1, sink);
  core::abort_token_issuer other_issuer(2, cluster, 2, sink);
  delivered out;
  const std::vector<core::room_key> keys{{5, 0}, {5, 1}};
  const core::room_key other_room{9, 0};
  if (second_peer) {
    w.spawn({2, "decode", 0}, [&] {
      network.endpoint(2).send(
          0, {core::control_kind::abort, 2, other_room, other_issuer.issue(other_room, 0), {}, {}});
    });
  }
  w.spawn({1, "decode", 0}, [&] {
    if (second_peer) w.wait_virtual(5);  // after rank 2's ABORT: rank 0 knows both peers
    for (const core::room_key& key : keys) {
      network.endpoint(1).send(0, {core::control_kind::abort, 1, key, issuer.issue(key, 0), {}, {}});
    }
  });
  w.spawn({0, "prefill", 0}, [&] {
    struct recording final : core::event_sink {
      explicit recording(delivered& d) : out(d) {}
      void emit(const core::event& e) override {
        if (const auto* r = std::get_if<core::token_rejected>(&e.body)) ++out.rejections[core::to_string(r->reason)];
      }
      delivered& out;
    } events(out);
    core::abort_token_verifier verifier(0, cluster, events);
    for (int idle = 0; idle < 40; ++idle) {
      while (auto m = network.try_receive(0)) {
        ++out.messages;
        if (m->key != keys[0] && m->key != keys[1] && m->key != other_room) ++out.with_other_key;
        if (!m->token) {
          ++out.rejections["no token"];
          continue;
        }
        if (verifier.accept_abort(*m->token, m->key, m->from)) ++out.accepted;
        idle = 0;
      }
      w.wait_virtual(10);
    }
  });
  w.run();
  return out;
}

TEST(SimNetwork, WithoutTheAdversaryEachMessageArrivesOnce) {
  const delivered d = run_with({}, 1);
  EXPECT_EQ(d.messages, 2u);
  EXPECT_EQ(d.accepted, 2u);
  EXPECT_TRUE(d.rejections.empty());
}

TEST(SimNetwork, ReplayedAndForgedMessagesAreAllRefused) {
  fault_profile profile;
  profile.set(fault_kind::message_replay, 1'000'000);
  profile.set(fault_kind::message_forge, 1'000'000);
  std::map<std::string, std::size_t> reasons;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const delivered d = run_with(profile, seed);
    // Two genuine, one replay after the second, and one to three tampered copies of each
    // genuine one (those naming another peer are skipped: the receiver has none): every extra
    // one is refused.
    EXPECT_GE(d.messages, 3u) << "seed " << seed;
    EXPECT_LE(d.messages, 9u) << "seed " << seed;
    EXPECT_EQ(d.accepted, 2u) << "seed " << seed;
    for (const auto& [reason, n] : d.rejections) reasons[reason] += n;
  }
  // Over 200 seeds every kind of tampering shows up as its own refusal.
  for (const char* reason : {"forged", "stale_generation", "future_generation", "duplicate",
                             "foreign_room", "no token"}) {
    EXPECT_GT(reasons[reason], 0u) << reason;
  }
}

TEST(SimNetwork, ATokenRelayedThroughAnotherPeerIsRefusedAsForeign) {
  fault_profile profile;
  profile.set(fault_kind::message_forge, 1'000'000);
  std::map<std::string, std::size_t> reasons;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const delivered d = run_with(profile, seed, true);
    EXPECT_EQ(d.accepted, 3u) << "seed " << seed;  // the three genuine ABORTs, once each
    for (const auto& [reason, n] : d.rejections) reasons[reason] += n;
  }
  // Rank 2 presenting rank 1's genuine token; a token re-signed to rank 2 is a forgery.
  EXPECT_GT(reasons["foreign_issuer"], 0u);
  EXPECT_GT(reasons["forged"], 0u);
}

// The forger that knows the MAC's algorithm but not the key re-signs its tampered tokens under
// keys of its own. A cluster whose key is the empty one (a core that MACs without its key, or
// never loaded one) takes some of them for genuine: more ABORTs accepted than were sent.
// Under the real key (the tests above) the same forgeries are refused, as `forged`.
TEST(SimNetwork, ARe_signedForgeryPassesOnlyWhereTheKeyIsEmpty) {
  fault_profile profile;
  profile.set(fault_kind::message_forge, 1'000'000);
  std::size_t seeds_fooled = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    if (run_with(profile, seed, false, core::cluster_key{}).accepted > 2) ++seeds_fooled;
  }
  EXPECT_GT(seeds_fooled, 0u);
}

}  // namespace
}  // namespace kvsim::sim::sim_network_test
