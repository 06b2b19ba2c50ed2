#include "tools/kvsim/seed_plan.h"

#include "tools/kvsim/cli_args.h"

namespace kvsim::tools {

shard_spec parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) {
    throw usage_error("--shard must be I/N with 0 <= I < N (got '" + text + "')");
  }
  shard_spec shard;
  shard.index = parse_unsigned(text.substr(0, slash), "the shard index in '" + text + "'");
  shard.count = parse_unsigned(text.substr(slash + 1), "the shard count in '" + text + "'");
  if (shard.count == 0 || shard.index >= shard.count) {
    throw usage_error("--shard must be I/N with 0 <= I < N (got '" + text + "')");
  }
  return shard;
}

std::uint64_t shard_seeds_up_to(shard_spec shard, std::uint64_t seed) {
  // The shard's seeds are 1 + index, 1 + index + count, ...
  if (seed < 1 + shard.index) return 0;
  return (seed - 1 - shard.index) / shard.count + 1;
}

}  // namespace kvsim::tools
