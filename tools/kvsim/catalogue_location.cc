#include "tools/kvsim/catalogue_location.h"

#include <system_error>

namespace kvsim::tools {

std::filesystem::path default_catalogue() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = self.parent_path().parent_path() / "share" / "kvsim" / "catalogue.json";
    if (std::filesystem::is_regular_file(installed, error)) return installed;
  }
  const std::filesystem::path source_tree = KVSIM_SOURCE_CATALOGUE;
  if (std::filesystem::is_regular_file(source_tree, error)) return source_tree;
  return std::filesystem::path(std::string(builtin_catalogue_name));
}

}  // namespace kvsim::tools
