#pragma once
// Shared by the tests whose messengers link over loopback: one link key for the test process
// (every messenger of a test is a rank of the same run), and a refusal log that prints
// nothing (refusals are what these tests check, by what they throw).
#include <string>

#include "real_backend/wire/run_secret.h"

namespace kvsim::testing {

inline const real::link_key& test_key() {
  static const real::link_key key = real::derive_link_key(real::draw_run_secret());
  return key;
}

inline void quiet(const std::string&) {}

}  // namespace kvsim::testing
