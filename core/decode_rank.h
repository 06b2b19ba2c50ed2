#pragma once
// One decode rank's core, assembled in one place: the page ledger of its destination pages,
// the issuer of its abort tokens (with the epoch drawn at this start), the verifier of the
// drain-ACKs and progress it takes (on the rank's own link keys), the receiver that drives
// them, and the running batch that takes a request over once its transfer is done. Every world that runs a decode rank builds it here (see core/prefill_rank.h).
//
// The rank owns its state objects and keeps them in place (neither copied nor moved). The
// ports stay the caller's and must outlive it.
#include <cstdint>

#include "core/abort_token.h"
#include "core/decode_receiver.h"
#include "core/link_keys.h"
#include "core/page_ledger.h"
#include "core/running_requests.h"
#include "core/variant.h"

namespace kvsim::core {

struct decode_rank_options {
  std::uint32_t pages_total = 0;  // the rank's pool of destination pages
  allocation_order order = allocation_order::lifo;
  // The issuer's epoch: drawn at random at every start of the rank (never zero, never
  // repeated under one cluster key: abort_token.h).
  std::uint64_t token_epoch = 0;
  std::uint32_t tokens_remembered_max = 4096;  // the verifier's memories (abort_token.h)
  decode_limits limits{};
  store_limits store{};  // the running batch's store jobs (core/store_jobs.h)
  variant v = variant::safe();
};

class decode_rank {
 public:
  // `links`: the keys of this rank's links (to every prefill rank that feeds it); the rank
  // keeps its own copy.
  decode_rank(rank_id rank, decode_ports ports, link_keyring links,
              const decode_rank_options& options);
  decode_rank(const decode_rank&) = delete;
  decode_rank& operator=(const decode_rank&) = delete;

  decode_receiver& receiver() { return receiver_; }
  running_requests& running() { return running_; }
  page_ledger& ledger() { return ledger_; }
  abort_token_verifier& verifier() { return verifier_; }

 private:
  link_keyring links_;
  page_ledger ledger_;
  abort_token_issuer issuer_;
  abort_token_verifier verifier_;
  decode_receiver receiver_;
  running_requests running_;
};

}  // namespace kvsim::core
