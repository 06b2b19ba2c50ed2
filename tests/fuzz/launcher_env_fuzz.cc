// Fuzz target `launcher_env`: the launcher's environment parsing (real_backend/launch/launcher.h).
// The input is an environment, one NAME=VALUE per line (the first '=' splits; a later line
// for the same name wins, as in `env`). Parsing must return a configuration whose rank and
// local rank are below the world size, or throw launch_error with one bounded line.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "real_backend/errors.h"
#include "real_backend/launch/launcher.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvsim;
  std::map<std::string, std::string, std::less<>> variables;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    const std::size_t equals = line.find('=');
    if (equals != std::string_view::npos) {
      variables[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
    }
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  const real::environment env = [&](std::string_view name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
  try {
    const real::launch_config config = real::parse_launch_environment(env);
    if (config.world_size == 0 || config.rank >= config.world_size ||
        config.local_rank >= config.world_size) {
      fuzz::finding("an impossible launch was accepted", real::describe(config));
    }
    if (config.master_port == 0 || config.rendezvous_port == 0) {
      fuzz::finding("port 0 was accepted", real::describe(config));
    }
  } catch (const real::launch_error& e) {
    fuzz::require_one_line(e.what());
  }
  return 0;
}
