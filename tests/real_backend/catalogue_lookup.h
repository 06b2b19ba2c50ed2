#pragma once
// Shared by the script tests: the repository's catalogue, scenario by name
// (tests/support/catalogue_scenarios.h), and the findings of a real run in words.
#include <gtest/gtest.h>

#include <string>

#include "real_backend/scripts/real_outcome.h"
#include "spec/catalogue.h"
#include "tests/support/catalogue_scenarios.h"

namespace kvsim::testing {

inline std::string invariants_of(const std::vector<real::real_finding>& findings) {
  std::string text;
  for (const auto& f : findings) text += (text.empty() ? "" : ",") + f.invariant;
  return text;
}

inline std::string lines_of(const std::vector<real::real_finding>& findings) {
  std::string text;
  for (const auto& f : findings) text += f.message + "\n";
  return text;
}

}  // namespace kvsim::testing
