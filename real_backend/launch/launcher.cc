#include "real_backend/launch/launcher.h"

#include <cstdlib>
#include <limits>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

// A value as an error line shows it: control characters as \xHH, at most 60 characters
// (a variable can hold anything, a newline or a megabyte; the error stays one short line).
std::string shown(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  constexpr std::size_t shown_max = 60;
  std::string out;
  for (const char c : text) {
    if (out.size() >= shown_max) return out.substr(0, shown_max - 3) + "...";
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::uint64_t parse_number(std::string_view name, const std::string& text, std::uint64_t max) {
  const auto refuse = [&](const std::string& why) -> std::uint64_t {
    throw launch_error("launcher: " + std::string(name) + " " + why + " (got '" + shown(text) +
                       "')");
  };
  if (text.empty()) return refuse("is set but empty");
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return refuse("must be a non-negative decimal integer");
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (max - digit) / 10) return refuse("must be at most " + std::to_string(max));
    value = value * 10 + digit;
  }
  return value;
}

std::optional<std::uint32_t> number(const environment& env, std::string_view name,
                                    std::uint64_t max = std::numeric_limits<std::uint32_t>::max()) {
  const std::optional<std::string> text = env(name);
  if (!text) return std::nullopt;
  return static_cast<std::uint32_t>(parse_number(name, *text, max));
}

std::uint32_t required(const environment& env, std::string_view name, std::string_view because) {
  const std::optional<std::uint32_t> value = number(env, name);
  if (!value) {
    throw launch_error("launcher: " + std::string(name) + " is not set, but " +
                       std::string(because) + " is");
  }
  return *value;
}

void read_rendezvous(const environment& env, launch_config& config) {
  if (const auto addr = env("MASTER_ADDR")) {
    if (addr->empty()) throw launch_error("launcher: MASTER_ADDR is set but empty");
    config.master_addr = *addr;
  } else if (config.world_size > 1) {
    throw launch_error("launcher: MASTER_ADDR is not set for a launch of " +
                       std::to_string(config.world_size) +
                       " ranks (under Slurm export it, e.g. MASTER_ADDR=$(scontrol show hostnames "
                       "\"$SLURM_JOB_NODELIST\" | head -n1))");
  }
  if (const auto port = number(env, "MASTER_PORT", 65535)) {
    if (*port == 0) throw launch_error("launcher: MASTER_PORT must be 1..65535 (got '0')");
    config.master_port = static_cast<std::uint16_t>(*port);
  }
  if (const auto port = number(env, "KVSIM_RENDEZVOUS_PORT", 65535)) {
    if (*port == 0)
      throw launch_error("launcher: KVSIM_RENDEZVOUS_PORT must be 1..65535 (got '0')");
    config.rendezvous_port = static_cast<std::uint16_t>(*port);
  } else if (config.source == launch_source::torchrun) {
    if (config.master_port == 65535) {
      throw launch_error(
          "launcher: MASTER_PORT 65535 leaves no port above it for kvsim's "
          "rendezvous (set KVSIM_RENDEZVOUS_PORT)");
    }
    config.rendezvous_port = static_cast<std::uint16_t>(config.master_port + 1);
  } else {
    config.rendezvous_port = config.master_port;
  }
}

void check(const launch_config& config, std::string_view rank_name, std::string_view size_name,
           std::string_view local_name) {
  if (config.world_size == 0) {
    throw launch_error("launcher: " + std::string(size_name) + " must be at least 1 (got '0')");
  }
  if (config.rank >= config.world_size) {
    throw launch_error("launcher: " + std::string(rank_name) + " " + std::to_string(config.rank) +
                       " is not below " + std::string(size_name) + " " +
                       std::to_string(config.world_size));
  }
  if (config.local_rank >= config.world_size) {
    throw launch_error("launcher: " + std::string(local_name) + " " +
                       std::to_string(config.local_rank) + " is not below " +
                       std::string(size_name) + " " + std::to_string(config.world_size));
  }
}

}  // namespace

const char* to_string(launch_source source) {
  switch (source) {
    case launch_source::single:
      return "single process";
    case launch_source::torchrun:
      return "torchrun";
    case launch_source::slurm:
      return "slurm";
  }
  return "unknown";
}

launch_config parse_launch_environment(const environment& env) {
  launch_config config;
  if (env("RANK") || env("WORLD_SIZE")) {
    config.source = launch_source::torchrun;
    config.rank = required(env, "RANK", "WORLD_SIZE");
    config.world_size = required(env, "WORLD_SIZE", "RANK");
    config.local_rank = number(env, "LOCAL_RANK").value_or(0);
    check(config, "RANK", "WORLD_SIZE", "LOCAL_RANK");
  } else if (env("SLURM_PROCID")) {
    config.source = launch_source::slurm;
    config.rank = required(env, "SLURM_PROCID", "SLURM_PROCID");
    config.world_size = required(env, "SLURM_NTASKS", "SLURM_PROCID");
    config.local_rank = number(env, "SLURM_LOCALID").value_or(0);
    check(config, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID");
  }
  read_rendezvous(env, config);
  return config;
}

environment process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

launch_config launch_from_process_environment() {
  return parse_launch_environment(process_environment());
}

std::string describe(const launch_config& config) {
  return "rank " + std::to_string(config.rank) + " of " + std::to_string(config.world_size) + " (" +
         to_string(config.source) + ", local rank " + std::to_string(config.local_rank) +
         "), rendezvous at " + config.master_addr + ":" + std::to_string(config.rendezvous_port);
}

}  // namespace kvsim::real
