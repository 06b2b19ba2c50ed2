#pragma once
// The repository's catalogue (KVSIM_CATALOGUE), scenario by name: shared by the tests of
// catalogue scenarios, in the simulator and on the real backend.
#include <gtest/gtest.h>

#include <string>

#include "spec/catalogue.h"

namespace kvsim::testing {

inline scenarios::scenario_spec from_catalogue(const std::string& name) {
  for (const scenarios::scenario_spec& s : scenarios::load_catalogue(KVSIM_CATALOGUE)) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no " << name << " in the catalogue";
  return {};
}

}  // namespace kvsim::testing
