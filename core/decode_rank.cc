#include "core/decode_rank.h"

#include <utility>

#include "core/invariant.h"

namespace kvsim::core {

decode_rank::decode_rank(rank_id rank, decode_ports ports, link_keyring links,
                         const decode_rank_options& options)
    : links_(std::move(links)),
      // Decode frees its own pages only once every lease on them ended: no variant changes
      // that in the ledger (B1 and B12 free early in the receiver itself).
      ledger_(rank, options.pages_total, ports.events,
              ledger_options{options.order, release_policy::defer_while_leased}),
      issuer_(rank, links_, options.token_epoch, ports.events),
      verifier_(rank, links_, ports.events, options.tokens_remembered_max),
      receiver_(rank, ports, {ledger_, issuer_, verifier_}, options.v, options.limits),
      running_(rank, ledger_, ports.store, ports.events, options.v, options.store) {
  KVSIM_INVARIANT(links_.self() == rank, "a decode rank is built on its own rank's links");
}

}  // namespace kvsim::core
