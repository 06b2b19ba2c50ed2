// The installed core carries no historical bug: built against the installed headers and
// library only (tools/check_install.sh). At compile time, a variant's has() is a constant
// false, so every bug's branch in the core is dead code; at run time, no bug can be asked for
// by name. One line per failure on stderr and exit 1; exit 0 when it all holds.
#include <cstdio>
#include <iterator>

#include "core/page_ledger.h"
#include "core/variant.h"

namespace {

using kvsim::core::bug;
using kvsim::core::variant;

static_assert(!kvsim::core::historical_bugs_built,
              "the installed core was built with historical bugs (KVSIM_HISTORICAL_BUGS)");
static_assert(!variant::safe().has(bug::b1_destination_reuse) &&
                  !variant::safe().has(bug::h3_skip_reduce),
              "has() is not a constant false in the installed core");

constexpr const char* bug_names[] = {"B1", "B2",  "B3",  "B4",  "B5", "B6", "B7",
                                     "B8", "B9",  "B10", "B11", "B12", "H1", "H2",
                                     "H3", "B13", "B14", "B15"};
static_assert(std::size(bug_names) == kvsim::core::bug_count);

}  // namespace

int main() {
  int failures = 0;
  for (const char* name : bug_names) {
    if (variant::from_name(name)) {
      std::fprintf(stderr, "no_historical_bugs: the installed core makes variant %s\n", name);
      ++failures;
    }
  }
  const auto safe = variant::from_name("safe");
  if (!safe || !safe->is_safe()) {
    std::fprintf(stderr, "no_historical_bugs: the installed core does not make variant safe\n");
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}
