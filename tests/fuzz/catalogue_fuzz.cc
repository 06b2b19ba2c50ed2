// Fuzz target `catalogue`: the catalogue loader (spec/catalogue.h) on any bytes. It must
// return scenarios or throw catalogue_error with one bounded line: no crash, no other
// exception, no std::bad_alloc (deep nesting, huge topologies). A scenario it accepts must
// also round-trip: parse_scenario(to_json(s)) == s.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spec/catalogue.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvsim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const scenarios::scenario_spec& s : scenarios::parse_catalogue(text, "fuzz.json")) {
      if (scenarios::parse_scenario(scenarios::to_json(s), "round trip") != s) {
        fuzz::finding("a scenario does not round-trip", s.name);
      }
    }
  } catch (const scenarios::catalogue_error& e) {
    fuzz::require_one_line(e.what());
  }
  return 0;
}
