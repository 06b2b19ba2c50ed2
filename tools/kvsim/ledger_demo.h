#pragma once
// `kvsim demo`: the seed change's page-42 shape, played on the page ledger alone, once with
// the historical release (free while leased) and once with the production one.
#include <ostream>

namespace kvsim::tools {

// Returns 0; what it shows is computed from the ledger's own state, not scripted text.
int run_ledger_demo(std::ostream& out);

}  // namespace kvsim::tools
