// Token epochs on real hardware: drawn from libsodium's CSPRNG, never zero (the core refuses
// zero), and a fresh one at every draw (two issuers, or one restarted, never share nonces).
#include "real_backend/wire/token_epoch.h"

#include <gtest/gtest.h>

#include <set>

namespace kvsim::real::token_epoch_test {
namespace {

TEST(TokenEpoch, EveryDrawIsNonZeroAndNew) {
  std::set<std::uint64_t> drawn;
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t epoch = draw_token_epoch();
    EXPECT_NE(epoch, 0u);
    EXPECT_TRUE(drawn.insert(epoch).second) << "epoch " << epoch << " drawn twice";
  }
}

}  // namespace
}  // namespace kvsim::real::token_epoch_test
