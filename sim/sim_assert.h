#pragma once
// Assertions of the simulator: always on, in every build type, and they name both values
// when comparing. A simulator that continues past a broken assumption reports findings that
// are not real.
#include <cstdio>
#include <cstdlib>

#define KVSIM_SIM_ASSERT(condition, what)                                                   \
  do {                                                                                      \
    if (!(condition)) {                                                                     \
      std::fprintf(stderr, "kvsim: simulator assertion failed at %s:%d: %s (%s)\n", __FILE__, \
                   __LINE__, what, #condition);                                             \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)

#define KVSIM_SIM_ASSERT_LT(a, b, what)                                                     \
  do {                                                                                      \
    const auto kvsim_a = (a);                                                               \
    const auto kvsim_b = (b);                                                               \
    if (!(kvsim_a < kvsim_b)) {                                                             \
      std::fprintf(stderr, "kvsim: simulator assertion failed at %s:%d: %s (%s = %llu, %s = %llu)\n", \
                   __FILE__, __LINE__, what, #a, static_cast<unsigned long long>(kvsim_a), #b, \
                   static_cast<unsigned long long>(kvsim_b));                               \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)
