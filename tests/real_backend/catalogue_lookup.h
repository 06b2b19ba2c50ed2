#pragma once
// Shared by the script tests: the repository's catalogue, scenario by name.
#include <gtest/gtest.h>

#include <string>

#include "real_backend/real_outcome.h"
#include "scenarios/catalogue.h"

namespace kvsim::testing {

inline scenarios::scenario_spec from_catalogue(const std::string& name) {
  for (const scenarios::scenario_spec& s : scenarios::load_catalogue(KVSIM_CATALOGUE)) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no " << name << " in the catalogue";
  return {};
}

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
