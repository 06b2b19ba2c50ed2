#pragma once
// Authenticated abort tokens (core/token_mac.h): decode's issuer and the verifier each rank
// checks them with. A token's MAC is made under the key of the link between its issuer and its
// audience (core/link_keys.h), so that a stale ACK for an older incarnation of a reused room
// (DOMAIN.md B11), a duplicated one, one from another cluster, a forged one, one prefill peer
// presenting another peer's token, or a token minted by a rank that is party to neither end
// never touches the current (room, generation).
//
// Nonces never repeat under one key: each issuer is built with an epoch the caller draws at
// start (real_backend: 64 random bits from libsodium; the simulator: from its seed), and
// counts nonces within it, so a restarted rank mints tokens no earlier capture matches; decode
// counts a drain-ACK only when it echoes the very token this life issued to that rank.
//
// Keys are supplied by the caller: there is no global key and no global state here
// (libsodium's one-time initialisation is idempotent and thread-safe). Every copy of a key,
// or of the MAC state prepared from it, that the core holds is wiped (sodium_memzero) when it
// is destroyed.
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "core/bounded_key_set.h"
#include "core/errors.h"
#include "core/ids.h"
#include "core/link_keys.h"
#include "core/ports.h"
#include "core/result.h"
#include "core/token_mac.h"

namespace kvsim::core {

class event_sink;

class abort_token_issuer {
 public:
  // `epoch` must differ between any two starts of any issuer under one cluster key (draw it at
  // random); zero is refused as the sign of a caller that did not draw one. `links` must
  // outlive the issuer and hold the link to every rank a token is issued for.
  abort_token_issuer(rank_id issuer, const link_keyring& links, std::uint64_t epoch,
                     event_sink& sink);
  // The same for a rank trusted with the cluster key itself: each link's key is derived the
  // first time a token goes to that rank.
  abort_token_issuer(rank_id issuer, const cluster_key& cluster, std::uint64_t epoch,
                     event_sink& sink);

  // A token for the ABORT of `key` sent to prefill rank `audience`.
  abort_token issue(room_key key, rank_id audience);
  std::uint64_t epoch() const { return epoch_; }

 private:
  rank_id issuer_;
  link_source links_;
  std::uint64_t epoch_;
  event_sink& sink_;
  std::uint64_t next_nonce_ = 1;
};

class abort_token_verifier {
 public:
  // `remembered_max` bounds both memories: the (room, generation)s with accepted tokens (the
  // oldest's memory goes when full) and the forgotten ones that keep being refused. `links`
  // must outlive the verifier: a token verifies only under the key of the link between its
  // issuer and its audience, and only where this rank holds that key.
  abort_token_verifier(rank_id rank, const link_keyring& links, event_sink& sink,
                       std::uint32_t remembered_max = 4096);
  // The same for a rank trusted with the cluster key itself (see abort_token_issuer).
  abort_token_verifier(rank_id rank, const cluster_key& cluster, event_sink& sink,
                       std::uint32_t remembered_max = 4096);

  // Accepts a genuine token for exactly `expected` that passes between its two parties, in
  // the role the caller holds, once per presenter: on a prefill rank an ABORT, presented by
  // the token's issuer to its audience (this rank); on a decode rank a drain-ACK, presented by
  // the token's audience back to its issuer (this rank). A token is good in one direction
  // only: a decode rank never takes an ABORT's token for an ACK, nor the reverse.
  // `presenter_is_party`: the caller knows the presenter is one of the decode ranks the room
  // serves, or cannot know yet (the room is not open here); false refuses it as not_a_party.
  status<token_rejection> accept_abort(const abort_token& token, room_key expected,
                                       rank_id presenter, bool presenter_is_party = true);
  // A drain-ACK also proves itself: `message` is the ACK that carries the token, and it must
  // bear its presenter's proof (core/message_proof.h) under the link's key; a token echoed by
  // anyone else, who saw the ABORT but holds no key of that link, is refused as unproven.
  // `presenter_is_party`: the ACK's sender is one of the prefill ranks the request waits for;
  // `issued`: the token this rank issued to that sender for the abort in progress (null when
  // none is in progress): an ACK is counted only when it echoes exactly that token.
  status<token_rejection> accept_ack(const control_message& message, room_key expected,
                                     bool presenter_is_party, const abort_token* issued);
  // The (room, generation) is over on this rank: its duplicate memory goes, and every token
  // of it is refused from now on (token_rejection::retired), so a token captured earlier
  // cannot be replayed. The refusal is remembered for the last `remembered_max` keys; what
  // is older is covered by the callers' own lifetimes (decode drops an ACK for a request it
  // no longer has before asking; prefill answers an authentic ABORT of a room that is over
  // with a drain-ACK and changes nothing).
  void forget(room_key key);
  // Emits the refusal of a message about `expected` whose token or proof this verifier passed
  // but its caller refuses (the token is not the one issued, the sender is no party to the
  // request): one event stream for every refusal of authority.
  void refuse(room_key expected, room_key token_key, std::uint64_t nonce, token_rejection why);
  std::uint32_t remembered() const;  // duplicate-memory entries held
  std::uint32_t remembered(room_key key) const;  // those of one (room, generation)
  std::uint32_t retired_count() const { return retired_.size(); }
  rank_id rank() const { return rank_; }
  // True when `message` bears a proof its sender made under the key of its link to this rank.
  bool proven(const control_message& message);
  // Sets `message.proof`: this rank's proof of it to rank `to`, under their link's key.
  void prove(control_message& message, rank_id to);

 private:
  using seen_entry = std::tuple<rank_id, std::uint64_t, std::uint64_t, rank_id>;

  // What a caller knows of a message beyond its token: whether its sender is a party to the
  // request, whether it must prove itself, and the token it must echo.
  struct presented {
    bool party = true;
    const control_message* proof_of = nullptr;  // a drain-ACK: proven, and echoing `issued`
    const abort_token* issued = nullptr;
  };
  status<token_rejection> accept(const abort_token& token, room_key expected, rank_id presenter,
                                 bool between_parties, presented what);

  rank_id rank_;
  link_source links_;
  event_sink& sink_;
  // Per (room, generation): (issuer, epoch, nonce, presenter) of every accepted token.
  std::map<room_key, std::set<seen_entry>> seen_;
  bounded_key_set seen_order_;
  bounded_key_set retired_;
};

}  // namespace kvsim::core
