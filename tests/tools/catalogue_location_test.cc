// The catalogue a kvsim binary carries is the source tree's, so a copied binary runs the
// same scenarios; and a build-tree kvsim reads the source tree's file (edits need no rebuild).
#include <gtest/gtest.h>

#include <string>

#include "tests/tools/cli_call.h"
#include "tools/kvsim/catalogue_location.h"
#include "tools/kvsim/run_one.h"

namespace kvsim::tools::catalogue_location_test {
namespace {

TEST(CatalogueLocation, TheBuiltInCopyIsTheSourceTreesCatalogue) {
  EXPECT_EQ(std::string(builtin_catalogue_text()), testing::read(KVSIM_SOURCE_CATALOGUE));
  const auto builtin = load_scenarios(std::string(builtin_catalogue_name));
  const auto file = load_scenarios(KVSIM_SOURCE_CATALOGUE);
  ASSERT_EQ(builtin.size(), file.size());
  for (std::size_t i = 0; i < file.size(); ++i) EXPECT_EQ(builtin[i].name, file[i].name);
}

TEST(CatalogueLocation, ABuildTreeKvsimReadsTheSourceTreesFile) {
  EXPECT_EQ(default_catalogue(), std::filesystem::path(KVSIM_SOURCE_CATALOGUE));
}

TEST(CatalogueLocation, ListSaysWhichCatalogueItRead) {
  const auto c = testing::call(cmd_list, {"--catalogue", std::string(builtin_catalogue_name)});
  ASSERT_EQ(c.code, 0);
  EXPECT_NE(c.out.find("scenarios from (built-in catalogue))"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace kvsim::tools::catalogue_location_test
