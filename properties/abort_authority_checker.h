#pragma once
// DOMAIN.md I2, the token half: an ABORT_ACK answers an abort decode really sent.
//
// Prefill acts on an ABORT only after its verifier accepted the ABORT's token; otherwise a
// forged or replayed ABORT could close a live room, drain it and send a drain-ACK that frees
// another request's pages on decode (the "authenticated abort tokens" of DOMAIN.md). From the
// events alone: every ack_target_registered of request k on prefill rank r, for decode rank d
// and nonce n, needs
//   - a token_issued of k with nonce n by rank d earlier in the log (decode sent that abort),
//   - a token_accepted of k with nonce n on rank r earlier in the log (r checked it).
// A core that skips its check, or whose verifier lets a tampered token through (another
// nonce, generation or room), registers a target the events cannot justify. Evidence: the
// registration, and the issue it matched if any.
//
// An abort_armed names the nonce of the token its rank issued to the first expected rank
// (each rank gets its own token): one that names another is a record that lies about what
// was sent. Evidence: the arming and the issue it should have named.
//
// The verifier's own acceptances must hold too, whatever is done with them next:
//   - a token binds its message to its issuer: it is accepted only from the rank that issued
//     it, or by the issuer itself (decode hears its own token back in a drain-ACK);
//   - a token is accepted once per presenter: a replayed or duplicated message is refused
//     (the nonce exists for that), even where acting on it twice would happen to be harmless;
//   - a refusal names the reason its keys show: another room, an older or a newer generation
//     of the same room, or (for a duplicate or a foreign issuer) the very key expected.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/events.h"
#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class abort_authority_checker : public sim::checker {
 public:
  const char* name() const override { return "abort_authority"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  // (who, request, nonce): the issuing rank for an issue, the checking rank for an acceptance.
  using token_at = std::tuple<core::rank_id, core::room_key, std::uint64_t>;

  std::optional<sim::finding> check_target(const core::ack_target_registered& target,
                                           core::rank_id rank, event_mark at) const;

  static std::optional<sim::finding> check_rejected(const core::token_rejected& rejected,
                                                    core::rank_id rank, event_mark at);
  std::optional<sim::finding> check_accepted(const core::token_accepted& accepted,
                                             core::rank_id rank, event_mark at);

  std::optional<sim::finding> check_armed(const core::abort_armed& armed, core::rank_id rank,
                                          event_mark at) const;

  std::map<token_at, event_mark> issued_;
  // (issuing rank, request, audience) -> the nonce and the step of the latest token issued.
  std::map<std::tuple<core::rank_id, core::room_key, core::rank_id>,
           std::pair<std::uint64_t, event_mark>>
      latest_to_;
  std::set<token_at> accepted_;
  // (checking rank, request, nonce, presenter) of every acceptance, for replays.
  std::map<std::tuple<core::rank_id, core::room_key, std::uint64_t, core::rank_id>, event_mark>
      accepted_from_;
};

}  // namespace kvsim::properties
