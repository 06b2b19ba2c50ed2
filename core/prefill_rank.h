#pragma once
// One prefill rank's core, assembled in one place: the page ledger of its source pages, its
// room lifetimes, the transfer status table, the verifier of the ABORTs it takes (on the
// rank's own link keys) and the sender that drives them. Every world that runs a prefill rank
// (the simulator's transfer world, the real backend, the soak, the benches, an engine) builds
// it here, so the wiring and the options' meaning live in one file: which ledger policy a
// variant implies, how large each memory of the rank is.
//
// The rank owns its state objects and keeps them in place (it is neither copied nor moved:
// the sender holds references to them). The ports stay the caller's and must outlive it.
#include <cstdint>

#include "core/abort_token.h"
#include "core/link_keys.h"
#include "core/page_ledger.h"
#include "core/prefill_sender.h"
#include "core/room_lifetimes.h"
#include "core/transfer_status_table.h"
#include "core/variant.h"

namespace kvsim::core {

struct prefill_rank_options {
  std::uint32_t pages_total = 0;  // the rank's pool of source pages
  allocation_order order = allocation_order::lifo;
  std::uint32_t tombstones_max = 1024;     // rooms aborted before open (and finished), kept
  std::uint32_t tokens_remembered_max = 4096;  // the verifier's memories (abort_token.h)
  variant v = variant::safe();
};

class prefill_rank {
 public:
  // `links`: the keys of this rank's links (to every decode rank it serves); the rank keeps
  // its own copy.
  prefill_rank(rank_id rank, prefill_ports ports, link_keyring links,
               const prefill_rank_options& options);
  prefill_rank(const prefill_rank&) = delete;
  prefill_rank& operator=(const prefill_rank&) = delete;

  prefill_sender& sender() { return sender_; }
  page_ledger& ledger() { return ledger_; }
  room_lifetimes& lifetimes() { return lifetimes_; }
  transfer_status_table& statuses() { return statuses_; }
  abort_token_verifier& verifier() { return verifier_; }

 private:
  link_keyring links_;
  page_ledger ledger_;
  room_lifetimes lifetimes_;
  transfer_status_table statuses_;
  abort_token_verifier verifier_;
  prefill_sender sender_;
};

}  // namespace kvsim::core
