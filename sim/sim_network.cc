#include "sim/sim_network.h"

#include <limits>
#include <optional>
#include <vector>

#include "core/abort_token.h"
#include "sim/sim_assert.h"

namespace kvsim::sim {
namespace {

constexpr std::uint64_t delay_tag = 0xde1a;
constexpr std::uint64_t delay_step_us = 10;
constexpr std::uint32_t delay_choices = 4;  // 10, 20, 30 or 40 us
constexpr std::uint64_t retransmit_us = 100;  // a dropped message arrives again this much later
constexpr std::uint64_t replay_tag = 0x4e91a7;
constexpr std::uint64_t forge_tag = 0xf0e6e;
constexpr std::uint64_t forge_byte_tag = 0xf0e6eb;
constexpr std::uint64_t forge_copies_tag = 0xf0e6ec;
constexpr std::uint64_t forge_peer_tag = 0xf0e6ed;
constexpr std::uint64_t forge_tampering_tag = 0xf0e6ee;  // what a re-signing forger changes
constexpr std::uint32_t forge_copies_max = 3;  // tampered copies per message the attack picks
constexpr std::uint64_t insider_lie_tag = 0x1a51de;
constexpr std::uint64_t insider_key_tag = 0x1a51df;
constexpr std::uint64_t insider_unproven_kind_tag = 0x1a51e0;  // chunk_ready or failed status
constexpr std::uint64_t adversary_delay_us = 15;
// The earlier life's decode epoch differs from every epoch of this one (the world's epochs
// count up from a fixed base; this flips the top bit).
constexpr std::uint64_t earlier_life_epoch_bit = 1ULL << 63;
// A nonce of a token decode issued before this run began (the prefill rank's earlier life):
// decode's counter starts at 1 in every run and never reaches it here.
constexpr std::uint64_t earlier_life_nonce = 1ULL << 63;

// What the insider says along with a message (sim_network.h).
enum class insider_lie : std::uint32_t {
  stranger_progress,   // chunk_ready for a request it has no part in
  stranger_failure,    // a failed status for a request it has no part in
  progress_as_party,   // chunk_ready as one of the request's prefill ranks, proven with a key of its own
  echo_as_audience,    // an ABORT's token echoed back as its audience, proven with a key of its own
  minted_own_ack,      // a token it minted on its own link, ACKed as itself
  earlier_life_ack,    // a recorded ACK of the previous life: genuine, proven, not issued now
  relayed_abort,       // an ABORT it saw, sent on to its audience as its own
  unproven_progress,   // chunk_ready or a failed status as the request's prefill rank, unproven
  earlier_life_abort,  // an ABORT recorded before the prefill rank restarted, replayed to it now
};
constexpr std::uint32_t insider_lies = static_cast<std::uint32_t>(insider_lie::earlier_life_abort) + 1;
constexpr std::size_t replay_window = 32;  // messages remembered per destination

// The tampered copies an adversary can make of a message carrying a token. Each must be
// refused by a correct verifier (DOMAIN.md: a stale, duplicated or forged ABORT/ACK never
// touches another generation).
enum class forgery : std::uint32_t {
  mac_bit,             // a bit of the MAC flipped
  token_generation_up, token_generation_down, token_generation_max,
  token_nonce_up, token_nonce_zero,
  token_issuer_other, token_room_other,
  message_generation_up,   // a genuine token presented for the next generation of the room
  message_generation_down,  // ... for the previous one (0 wraps to max)
  message_generation_max,
  message_room_other,       // ... for another room
  both_generations_max,    // token and message agree on a generation nobody issued
  token_stripped,
  // Another peer of the receiver presents the genuine token in its own message (a rank that
  // learned it replays it): an ABORT is good only from the token's issuer, and a drain-ACK
  // only from its audience, so one prefill peer's token never serves for another's ACK.
  relayed_by_other_peer,
  reattributed,             // the token's issuer and the message's sender both made that peer
  both_rooms_other,         // token and message agree on another room
  token_audience_other,     // the token claims another audience
  // Another peer presents the token rewritten to name it as the audience (the MAC covers it).
  readdressed_to_other_peer,
  // One bit of one of the token's fields flipped (room, generation, issuer, audience, epoch
  // or nonce, any bit of its width): the MAC must cover every bit of every field.
  token_field_bit,
  // A forger that knows the MAC's algorithm but not the cluster's key: it tampers as one of the
  // kinds above (drawn again), then MACs the token afresh under the token's link key derived
  // from a cluster key of its own. From the empty key (all zeros): a core that MACs without
  // its key, or with a key never loaded, accepts it. From another cluster's key: a process left
  // over from an earlier deployment, or a rank of a neighbouring cluster, whose tokens are
  // well formed and must still be refused. Every tampering above keeps the genuine MAC, so
  // only these show a MAC that does not depend on the key.
  resigned_empty_key,
  resigned_foreign_key,
};
constexpr std::uint32_t forgery_kinds = static_cast<std::uint32_t>(forgery::resigned_foreign_key) + 1;
// The tamperings a re-signing forger applies first (everything before the re-signing kinds).
constexpr std::uint32_t tampering_kinds = static_cast<std::uint32_t>(forgery::token_field_bit) + 1;
// room, generation, issuer, audience, epoch, nonce
constexpr std::uint32_t token_field_bits = 64 + 32 + 32 + 32 + 64 + 64;

template <class T>
void flip_bit(T& field, std::uint32_t bit) {
  field ^= static_cast<T>(T{1} << bit);
}

// `byte`: the MAC byte (mac_bit) or the field bit (token_field_bit) to flip; `peer`: another
// rank the receiver hears from, for the forgeries that name one.
core::control_message forged(core::control_message m, forgery how, std::uint32_t byte,
                             core::rank_id peer) {
  core::abort_token& t = *m.token;
  constexpr core::generation_t generation_max = std::numeric_limits<core::generation_t>::max();
  switch (how) {
    case forgery::mac_bit: t.mac[byte % t.mac.size()] ^= 0x01; break;
    case forgery::token_generation_up: ++t.key.generation; break;
    case forgery::token_generation_down: --t.key.generation; break;  // 0 wraps to max
    case forgery::token_generation_max: t.key.generation = generation_max; break;
    case forgery::token_nonce_up: ++t.nonce; break;
    case forgery::token_nonce_zero: t.nonce = 0; break;
    case forgery::token_issuer_other: ++t.issuer; break;
    case forgery::token_room_other: ++t.key.room; break;
    case forgery::message_generation_up: ++m.key.generation; break;
    case forgery::message_generation_down: --m.key.generation; break;
    case forgery::message_generation_max: m.key.generation = generation_max; break;
    case forgery::message_room_other: ++m.key.room; break;
    case forgery::both_generations_max:
      t.key.generation = generation_max;
      m.key.generation = generation_max;
      break;
    case forgery::token_stripped: m.token.reset(); break;
    case forgery::relayed_by_other_peer: m.from = peer; break;
    case forgery::reattributed:
      t.issuer = peer;
      m.from = peer;
      break;
    case forgery::both_rooms_other:
      ++t.key.room;
      ++m.key.room;
      break;
    case forgery::token_audience_other: ++t.audience; break;
    case forgery::readdressed_to_other_peer:
      t.audience = peer;
      m.from = peer;
      break;
    case forgery::resigned_empty_key:
    case forgery::resigned_foreign_key:
      KVSIM_SIM_ASSERT(false, "a re-signing forger tampers first, then signs (attack)");
      break;
    case forgery::token_field_bit:
      if (byte < 64) {
        flip_bit(t.key.room, byte);
      } else if (byte < 96) {
        flip_bit(t.key.generation, byte - 64);
      } else if (byte < 128) {
        flip_bit(t.issuer, byte - 96);
      } else if (byte < 160) {
        flip_bit(t.audience, byte - 128);
      } else if (byte < 224) {
        flip_bit(t.epoch, byte - 160);
      } else {
        flip_bit(t.nonce, byte - 224);
      }
      break;
  }
  return m;
}

// The forger's own cluster keys (never the cluster's: the scenario world keeps that one).
// It knows the algorithm, link derivation included, so it MACs under the key of the token's
// link as derived from its own cluster key: the empty one (a core that never loaded its key
// derives exactly these) or another cluster's.
core::abort_token resigned(core::abort_token token, forgery signer) {
  core::cluster_key cluster;  // the empty key
  if (signer == forgery::resigned_foreign_key) {
    for (std::size_t i = 0; i < cluster.bytes.size(); ++i) {
      cluster.bytes[i] = static_cast<std::uint8_t>(0xc3 ^ (7 * i));
    }
  }
  token.mac = core::token_mac(core::derive_link_key(cluster, token.issuer, token.audience)).sign(token);
  return token;
}

}  // namespace

class sim_network::endpoint_port final : public core::messenger {
 public:
  endpoint_port(sim_network& network, core::rank_id rank) : network_(network), rank_(rank) {}
  void send(core::rank_id to, const core::control_message& message) override {
    network_.send(rank_, to, message);
  }
  core::control_message receive() override { return network_.receive(rank_); }

 private:
  sim_network& network_;
  core::rank_id rank_;
};

sim_network::sim_network(world& w) : world_(w) {}
sim_network::~sim_network() = default;

sim_network::mailbox& sim_network::box(core::rank_id rank) {
  KVSIM_SIM_ASSERT_LT(rank, mailbox_rank_limit, "a rank id far beyond any topology");
  if (rank >= mailboxes_.size()) mailboxes_.resize(static_cast<std::size_t>(rank) + 1);
  if (!mailboxes_[rank]) mailboxes_[rank] = std::make_unique<mailbox>();
  mailbox& m = *mailboxes_[rank];
  if (!m.waiters) {
    // Named by its rank: a mailbox may first be used mid-run.
    m.waiters = std::make_unique<wait_queue>(
        world_, "mailbox of rank " + std::to_string(rank),
        object_token(object_kind::wait_queue, name_token("mailbox") ^ rank));
  }
  return m;
}

core::messenger& sim_network::endpoint(core::rank_id rank) {
  auto& port = ports_[rank];
  if (!port) port = std::make_unique<endpoint_port>(*this, rank);
  box(rank);
  return *port;
}

void sim_network::send(core::rank_id from, core::rank_id to, core::control_message message) {
  world_.step();
  message.from = from;
  const message_id id = next_message_++;
  world_.emit(message_sent{id, from, to, message.kind, message.key});
  if (!connected(from, to)) {
    world_.emit(message_lost{id, to});
    return;
  }
  // The control plane runs over TCP (ZMQ in SGLang, Mooncake's RPC): a message is not lost
  // for good, but a dropped connection loses what was in flight and the sender resends it
  // after reconnecting, late and out of order with everything sent meanwhile.
  const std::uint64_t lost_us = world_.fault(fault_kind::message_drop) ? retransmit_us : 0;
  if (lost_us != 0) world_.emit(message_dropped{id});
  const int copies = world_.fault(fault_kind::message_duplicate) ? 2 : 1;
  // What the adversary remembers of messages to `to` is read by later sends to it.
  if (world_.faults().of(fault_kind::message_replay) != 0 ||
      world_.faults().of(fault_kind::message_forge) != 0) {
    world_.touch(object_token(object_kind::network_log, to), access::write);
  }
  for (int copy = 0; copy < copies; ++copy) {
    const std::uint64_t delay_us =
        lost_us + (world_.fault(fault_kind::message_delay)
                       ? delay_step_us * (1 + world_.choose(delay_tag, delay_choices))
                       : 0);
    deliver(id, to, message, delay_us);
  }
  peers_of_[to].insert(from);
  attack(to, message);
  // The replay window costs a copy per message: kept only in runs where replay can fire.
  if (world_.faults().of(fault_kind::message_replay) == 0) return;
  std::deque<core::control_message>& past = sent_to_[to];
  past.push_back(message);
  if (past.size() > replay_window) past.pop_front();
}

void sim_network::deliver(message_id id, core::rank_id to, const core::control_message& message,
                          std::uint64_t delay_us) {
  world_.post(delay_us, [this, id, to, message]() mutable {
    if (!connected(message.from, to)) {
      world_.emit(message_lost{id, to});
      return;
    }
    world_.touch(object_token(object_kind::mailbox, to), access::write);
    box(to).messages.push_back(std::move(message));  // a delivery runs once
    world_.emit(message_delivered{id, to});
    box(to).waiters->notify_all();
  });
}

// What an adversary sends along with `message` (both are faults of the run's profile, off
// unless the scenario allows them): an earlier message to the same rank again, or a tampered
// copy of this one. Each is a message of its own on the wire (sent, then delivered).
void sim_network::inject(core::rank_id to, const core::control_message& m) {
  const message_id id = next_message_++;
  world_.emit(message_sent{id, m.from, to, m.kind, m.key, true});
  deliver(id, to, m, adversary_delay_us);
}

// A key the insider holds, as an attacker tries them: its link to the message's receiver, or
// its link to the rank it claims to be (a key that should prove nothing of another link).
const core::link_macs& sim_network::own_key(core::rank_id self, core::rank_id receiver,
                                            core::rank_id claimed) {
  return links_(self, world_.choose(insider_key_tag, 2) == 0 ? receiver : claimed);
}

// The insider's lie along with `message` (sim_network.h), each under keys it holds or a
// recording of the earlier life: a correct core refuses every one.
void sim_network::lie(core::rank_id to, const core::control_message& message) {
  const auto how = world_.choose(insider_lie_tag, insider_lies);
  if (lie_about_progress(how, to, message)) return;
  // The ACK lies answer an ABORT on its way to its audience: they go back to its issuer.
  if (message.kind != core::control_kind::abort || !message.token) return;
  lie_about_abort(how, to, message);
}

bool sim_network::lie_about_progress(std::uint32_t chosen, core::rank_id to,
                                     const core::control_message& message) {
  const core::rank_id self = *insider_;
  // Progress goes to the decode rank of the request the message is about: its receiver, or
  // its sender for what decode sends (metadata, ABORT), so a lie can land while prefill writes.
  const bool from_decode = message.kind == core::control_kind::metadata ||
                           message.kind == core::control_kind::abort;
  const core::rank_id decode_side = from_decode ? message.from : to;
  const core::rank_id prefill_side = from_decode ? to : message.from;
  const auto proven = [&](core::control_message m) {
    m.proof = links_(self, decode_side).messages.sign(m, decode_side);
    return m;
  };
  switch (static_cast<insider_lie>(chosen)) {
    case insider_lie::stranger_progress:
      inject(decode_side, proven({core::control_kind::chunk_ready, self, message.key, {}, {}, {}}));
      return true;
    case insider_lie::stranger_failure:
      inject(decode_side,
             proven({core::control_kind::status, self, message.key, {}, {}, core::kv_status::failed}));
      return true;
    case insider_lie::progress_as_party: {
      // The prefill rank of the message's link claims its chunks done; only that rank's key
      // could prove it, and the insider has only its own: it tries the one it shares with the
      // receiver or the one it shares with the rank it claims to be.
      core::control_message claimed{core::control_kind::chunk_ready, prefill_side, message.key, {}, {}, {}};
      claimed.proof = own_key(self, decode_side, prefill_side).messages.sign(claimed, decode_side);
      inject(decode_side, claimed);
      return true;
    }
    case insider_lie::unproven_progress: {
      // What anyone who reaches the port can send, holding no key at all: progress in the
      // prefill rank's name, with no proof.
      const bool failure = world_.choose(insider_unproven_kind_tag, 2) == 1;
      inject(decode_side, {failure ? core::control_kind::status : core::control_kind::chunk_ready,
                           prefill_side, message.key, {}, {},
                           failure ? std::optional{core::kv_status::failed} : std::nullopt});
      return true;
    }
    case insider_lie::earlier_life_abort: {
      if (!links_before_restart_) return true;  // no recording crosses a sealed connection
      // Decode aborted this (room, generation) in the prefill rank's earlier life, whose
      // memories went with it; the recorded ABORT is genuine, under the key the link had then.
      core::abort_token recorded{message.key, decode_side, prefill_side, 0, earlier_life_nonce, {}};
      // Decode's epoch as that recording carried it: the one its tokens carry now when one goes
      // by (decode did not restart), any drawn one otherwise (only the MAC binds it).
      recorded.epoch = message.token ? message.token->epoch : 1;
      recorded.mac = links_before_restart_(decode_side, prefill_side).tokens.sign(recorded);
      inject(prefill_side, {core::control_kind::abort, decode_side, message.key, recorded, {}, {}});
      return true;
    }
    case insider_lie::echo_as_audience:
    case insider_lie::minted_own_ack:
    case insider_lie::earlier_life_ack:
    case insider_lie::relayed_abort:
      return false;
  }
  return false;
}

void sim_network::lie_about_abort(std::uint32_t chosen, core::rank_id to,
                                  const core::control_message& message) {
  const core::rank_id self = *insider_;
  const auto how = static_cast<insider_lie>(chosen);
  const core::abort_token& seen = *message.token;
  if (how == insider_lie::relayed_abort) {
    core::control_message relayed = message;
    relayed.from = self;  // the genuine token, presented by a rank that is not its issuer
    inject(to, relayed);
    return;
  }
  const core::rank_id decode = seen.issuer;
  core::control_message ack{core::control_kind::abort_ack, seen.audience, message.key, seen, {}, {}};
  switch (how) {
    case insider_lie::echo_as_audience:
      ack.proof = own_key(self, decode, seen.audience).messages.sign(ack, decode);
      break;
    case insider_lie::minted_own_ack: {
      core::abort_token minted{message.key, decode, self, seen.epoch, seen.nonce, {}};
      minted.mac = links_(decode, self).tokens.sign(minted);
      ack.from = self;
      ack.token = minted;
      ack.proof = links_(self, decode).messages.sign(ack, decode);
      break;
    }
    case insider_lie::earlier_life_ack: {
      core::abort_token earlier = seen;
      earlier.epoch ^= earlier_life_epoch_bit;
      earlier.mac = links_(decode, seen.audience).tokens.sign(earlier);
      ack.token = earlier;
      ack.proof = links_(seen.audience, decode).messages.sign(ack, decode);
      break;
    }
    case insider_lie::stranger_progress:
    case insider_lie::stranger_failure:
    case insider_lie::progress_as_party:
    case insider_lie::relayed_abort:
    case insider_lie::unproven_progress:
    case insider_lie::earlier_life_abort:
      return;
  }
  inject(decode, ack);
}

void sim_network::attack(core::rank_id to, const core::control_message& message) {
  const auto inject = [&](const core::control_message& m) { this->inject(to, m); };
  if (const auto past = sent_to_.find(to);
      past != sent_to_.end() && !past->second.empty() && world_.fault(fault_kind::message_replay)) {
    inject(past->second[world_.choose(replay_tag, static_cast<std::uint32_t>(past->second.size()))]);
  }
  if (message.token && world_.fault(fault_kind::message_forge)) {
    // An attacker tries several tamperings of one message, not just one.
    const std::uint32_t copies = 1 + world_.choose(forge_copies_tag, forge_copies_max);
    for (std::uint32_t copy = 0; copy < copies; ++copy) {
      auto how = static_cast<forgery>(world_.choose(forge_tag, forgery_kinds));
      std::optional<forgery> signer;
      if (how == forgery::resigned_empty_key || how == forgery::resigned_foreign_key) {
        signer = how;
        how = static_cast<forgery>(world_.choose(forge_tampering_tag, tampering_kinds));
        if (how == forgery::token_stripped) continue;  // nothing left to sign
      }
      const std::uint32_t byte =
          how == forgery::mac_bit           ? world_.choose(forge_byte_tag, core::abort_mac_bytes)
          : how == forgery::token_field_bit ? world_.choose(forge_byte_tag, token_field_bits)
                                            : 0;
      core::rank_id peer = message.from;
      if (how == forgery::relayed_by_other_peer || how == forgery::reattributed ||
          how == forgery::readdressed_to_other_peer) {
        std::vector<core::rank_id> others;
        for (const core::rank_id p : peers_of_[to]) {
          if (p != message.from && p != message.token->issuer) others.push_back(p);
        }
        if (others.empty()) continue;
        peer = others[world_.choose(forge_peer_tag, static_cast<std::uint32_t>(others.size()))];
      }
      core::control_message copy_sent = forged(message, how, byte, peer);
      if (signer) copy_sent.token = resigned(*copy_sent.token, *signer);
      inject(copy_sent);
    }
  }
  if (insider_ && world_.fault(fault_kind::message_forge)) lie(to, message);
}

bool sim_network::connected(core::rank_id from, core::rank_id to) const {
  return liveness_ == nullptr || (liveness_->alive(from) && liveness_->alive(to));
}

core::control_message sim_network::receive(core::rank_id rank) {
  world_.step();
  mailbox& m = box(rank);
  const std::uint64_t object = object_token(object_kind::mailbox, rank);
  world_.touch(object, access::write);
  while (m.messages.empty()) {
    m.waiters->wait();
    world_.touch(object, access::write);
  }
  core::control_message message = std::move(m.messages.front());
  m.messages.pop_front();
  return message;
}

std::optional<core::control_message> sim_network::try_receive(core::rank_id rank) {
  mailbox& m = box(rank);
  const std::uint64_t object = object_token(object_kind::mailbox, rank);
  world_.touch(object, m.messages.empty() ? access::read : access::write);
  if (m.messages.empty()) return std::nullopt;
  core::control_message message = std::move(m.messages.front());
  m.messages.pop_front();
  return message;
}

}  // namespace kvsim::sim
