// Nothing but catalogue_error escapes the loader, whatever the damage: the shipped catalogue
// truncated at every byte of its first scenario (and every 31st after), and each shipped
// scenario alone with every field replaced by odd values or removed.
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "spec/catalogue.h"

namespace kvsim::scenarios::catalogue_damage_test {
namespace {

using nlohmann::json;
using problem = catalogue_problem;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every outcome of parsing damaged text: a catalogue, or one catalogue_error line.
void expect_parsed_or_one_line_error(const std::string& text, const std::string& what) {
  try {
    parse_catalogue(text, "damaged.json");
  } catch (const catalogue_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("damaged.json: ", 0), 0u) << what << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << what << ": " << message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

// Every cut inside the first scenario, then every 31st byte: each is one malformed_json line.
TEST(CatalogueDamage, ATruncatedCatalogueIsOneErrorLine) {
  const std::string text = read_bytes(KVSIM_CATALOGUE);
  ASSERT_GT(text.size(), 1000u);
  const std::size_t second_scenario = text.find("\"name\"", text.find("\"name\"") + 1);
  ASSERT_NE(second_scenario, std::string::npos);
  for (std::size_t cut = 0; cut + 1 < text.size(); cut += cut < second_scenario ? 1 : 31) {
    try {
      parse_catalogue(text.substr(0, cut), "damaged.json");
      ADD_FAILURE() << "a catalogue cut at byte " << cut << " loaded";
    } catch (const catalogue_error& e) {
      EXPECT_EQ(e.problem(), problem::malformed_json) << cut << ": " << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << cut;
    }
  }
}

// Each shipped scenario alone in a catalogue, every field of it replaced by odd values or
// removed: a catalogue or one catalogue_error line, never another exception.
TEST(CatalogueDamage, EveryFieldReplacedOrRemovedGivesACatalogueOrOneErrorLine) {
  const std::vector<json> odd = {
      nullptr, -1, 0, 18446744073709551615ULL, 1.5, "x", json::object(), json::array({0})};
  std::size_t tried = 0;
  for (const scenario_spec& spec : load_catalogue(KVSIM_CATALOGUE)) {
    const json alone = catalogue_to_json({spec});
    const json leaves = alone.flatten();
    for (const auto& [pointer_text, leaf] : leaves.items()) {
      const json::json_pointer pointer(pointer_text);
      for (const json& value : odd) {
        json document = alone;
        document[pointer] = value;
        expect_parsed_or_one_line_error(document.dump(), pointer_text + " = " + value.dump());
        ++tried;
      }
      json document = alone;
      json& parent = document.at(pointer.parent_pointer());
      if (parent.is_array()) {
        parent.erase(std::stoul(pointer.back()));
      } else {
        parent.erase(pointer.back());
      }
      expect_parsed_or_one_line_error(document.dump(), pointer_text + " removed");
    }
  }
  EXPECT_GT(tried, 2000u);
}

}  // namespace
}  // namespace kvsim::scenarios::catalogue_damage_test
