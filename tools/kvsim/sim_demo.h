#pragma once
// `kvsim demo`, second part: random search on the simulator's two-rank test world, once with
// decode's historical release-before-drain (must be found) and once as shipped (must stay
// clean). Prints each finding's seed with its fault profile, as every kvsim run does.
#include <ostream>

namespace kvsim::tools {

// 0 when the planted bug was found and the safe world stayed clean; 1 otherwise.
int run_sim_demo(std::ostream& out);

}  // namespace kvsim::tools
