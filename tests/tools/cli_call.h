#pragma once
// Calling kvsim's subcommands in-process from a test: the exit code and what went to out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/kvsim/commands.h"

namespace kvsim::tools::testing {

struct captured {
  int code = 0;
  std::string out;
};

template <typename Command>
captured call(Command command, const arguments& args) {
  std::ostringstream out;
  captured c;
  c.code = command(args, out);
  c.out = out.str();
  return c;
}

// An empty directory of its own under the test's temporary directory.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / ("kvsim_cli_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace kvsim::tools::testing
