#include "core/prefill_rank.h"

#include <utility>

#include "core/invariant.h"

namespace kvsim::core {
namespace {

// B3's half in the ledger: a source page released while a transfer still reads it is freed
// at once. Only the harness's build can switch it on (core/variant.h).
ledger_options source_ledger_options(const prefill_rank_options& options) {
  ledger_options ledger{options.order, release_policy::defer_while_leased};
#if KVSIM_HISTORICAL_BUGS
  if (options.v.has(bug::b3_source_reuse)) ledger.release = release_policy::free_while_leased;
#endif
  return ledger;
}

}  // namespace

prefill_rank::prefill_rank(rank_id rank, prefill_ports ports, link_keyring links,
                           const prefill_rank_options& options)
    : links_(std::move(links)),
      ledger_(rank, options.pages_total, ports.events, source_ledger_options(options)),
      lifetimes_(rank, ports.events, options.tombstones_max),
      statuses_(rank, ports.events),
      verifier_(rank, links_, ports.events, options.tokens_remembered_max),
      sender_(rank, ports, {ledger_, lifetimes_, statuses_, verifier_}, options.v) {
  KVSIM_INVARIANT(links_.self() == rank, "a prefill rank is built on its own rank's links");
}

}  // namespace kvsim::core
