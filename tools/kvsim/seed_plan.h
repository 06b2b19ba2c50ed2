#pragma once
// Which seeds a search runs. Unsharded, a search runs seeds 1, 2, 3, ... (up to --runs N);
// shard i of n (0-based, --shard i/n) takes the seeds s with (s - 1) mod n == i, so shards are
// disjoint and together give exactly the unsharded set; within a shard, job j of J (--jobs)
// takes every J-th of the shard's seeds, starting with its j-th.
#include <cstdint>
#include <optional>
#include <string>

namespace kvsim::tools {

struct shard_spec {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
};

// "2/8" -> {2, 8}; usage_error unless 0 <= i < n.
shard_spec parse_shard(const std::string& text);

// How many of the shard's seeds are <= `seed`: the runs a search of that shard made up to
// and including `seed` when it ran its seeds in order. Summed over every shard, `seed`.
std::uint64_t shard_seeds_up_to(shard_spec shard, std::uint64_t seed);

class seed_plan {
 public:
  seed_plan(shard_spec shard, std::uint64_t job, std::uint64_t jobs,
            std::optional<std::uint64_t> max_seed)
      : stride_(shard.count * jobs), next_(1 + shard.index + shard.count * job), max_seed_(max_seed) {}

  // The next seed of this job, or empty when its share of 1..max_seed is done.
  std::optional<std::uint64_t> next() {
    if (max_seed_ && next_ > *max_seed_) return std::nullopt;
    const std::uint64_t seed = next_;
    next_ += stride_;
    return seed;
  }

 private:
  std::uint64_t stride_;
  std::uint64_t next_;
  std::optional<std::uint64_t> max_seed_;
};

}  // namespace kvsim::tools
