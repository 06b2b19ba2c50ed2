#pragma once
// Internal invariants of the core: states that no sequence of calls can reach unless the
// core itself is wrong. They stay on in every build type (Release keeps them too), because a
// ledger that silently continues past a broken invariant is how pages get reused under a
// live transfer. Misuse by a caller is never an invariant failure: it is refused as data.
#include <cstdio>
#include <cstdlib>

#define KVSIM_INVARIANT(condition, what)                                                \
  do {                                                                                  \
    if (!(condition)) {                                                                 \
      std::fprintf(stderr, "kvsim: core invariant broken at %s:%d: %s (%s)\n", __FILE__, \
                   __LINE__, what, #condition);                                         \
      std::abort();                                                                     \
    }                                                                                   \
  } while (false)
