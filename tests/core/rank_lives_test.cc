// Lives (core/link_keys.h): a keyring built for the lives of both ends of each link binds every
// MAC of the link to those lives, so what was recorded before either end restarted is refused
// by the lives that follow, whatever their memories hold (none: a restarted rank starts empty).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/abort_token.h"
#include "core/events.h"
#include "core/link_keys.h"
#include "core/prefill_rank.h"
#include "tests/support/fake_ports.h"
#include "tests/support/recording_sink.h"

namespace kvsim::core::rank_lives_test {
namespace {

using testing::fake_messenger;
using testing::fake_transfers;
using testing::recording_sink;

constexpr rank_id prefill = 0;
constexpr rank_id decode = 1;
constexpr std::uint64_t decode_life = 0xd0;
constexpr std::uint64_t prefill_first_life = 0x1f;
constexpr std::uint64_t prefill_next_life = 0x2f;
const room_key request{7, 0};

cluster_key cluster() {
  cluster_key key;
  key.bytes.fill(9);
  return key;
}

TEST(RankLives, BothEndsDeriveOneKeyPerPairOfLivesAndAnotherForAnyOtherLife) {
  const cluster_key c = cluster();
  const auto key = [&](std::uint64_t decode_at, std::uint64_t prefill_at) {
    return derive_life_link_key(c, decode, decode_at, prefill, prefill_at).bytes;
  };
  EXPECT_EQ(key(decode_life, prefill_first_life),
            derive_life_link_key(c, prefill, prefill_first_life, decode, decode_life).bytes);
  EXPECT_NE(key(decode_life, prefill_first_life), key(decode_life, prefill_next_life))
      << "prefill restarted";
  EXPECT_NE(key(decode_life, prefill_first_life), key(decode_life + 1, prefill_first_life))
      << "decode restarted";
  EXPECT_NE(key(decode_life, prefill_first_life), key(prefill_first_life, decode_life))
      << "the two lives swapped between the ranks";
  EXPECT_NE(key(decode_life, prefill_first_life), derive_link_key(c, decode, prefill).bytes)
      << "a life-bound key is not the unbound link key";
}

TEST(RankLivesDeathTest, ALifeIsNeverZero) {
  EXPECT_DEATH((void)derive_life_link_key(cluster(), decode, 0, prefill, prefill_first_life),
               "never zero");
}

TEST(RankLivesDeathTest, ALinkJoinsTwoRanks) {
  EXPECT_DEATH((void)derive_life_link_key(cluster(), decode, decode_life, decode, decode_life + 1),
               "a link joins two ranks");
}

// One life of a prefill rank, assembled by its composition root on a keyring of that life.
struct prefill_life {
  explicit prefill_life(std::uint64_t life)
      : rank(prefill, {transfers, control, sink},
             link_keyring(prefill, life, cluster(), {{decode, decode_life}}),
             prefill_rank_options{.pages_total = 8}) {
    const auto pages = rank.ledger().allocate(request, 4).value();
    EXPECT_TRUE(rank.sender().open(request, pages, std::vector<rank_id>{decode}));
  }
  recording_sink sink;
  fake_transfers transfers;
  fake_messenger control;
  prefill_rank rank;
};

// An ABORT decode sent to the prefill rank's first life, recorded by whoever saw it.
control_message abort_recorded_in_first_life(recording_sink& sink) {
  const link_keyring decode_ring(decode, decode_life, cluster(), {{prefill, prefill_first_life}});
  abort_token_issuer issuer(decode, decode_ring, decode_life, sink);
  return {control_kind::abort, decode, request, issuer.issue(request, prefill), {}, {}};
}

TEST(RankLives, TheLifeTheAbortWasForTakesIt) {
  prefill_life first(prefill_first_life);
  first.rank.sender().on_abort(abort_recorded_in_first_life(first.sink));
  EXPECT_TRUE(first.rank.lifetimes().is_closed(request));
  EXPECT_EQ(first.control.of_kind(control_kind::abort_ack).size(), 1u);
}

TEST(RankLives, AnAbortRecordedBeforeThePrefillRankRestartedTouchesNothingInItsNextLife) {
  // The same (room, generation) served again after the restart: the new life's memories are
  // empty, so only the keys can tell the recording from decode's ABORT.
  prefill_life next(prefill_next_life);
  next.rank.sender().on_abort(abort_recorded_in_first_life(next.sink));
  EXPECT_TRUE(next.rank.lifetimes().is_admitting(request)) << "the replay closed the room";
  EXPECT_TRUE(next.control.of_kind(control_kind::abort_ack).empty());
  const auto refused = next.sink.last<token_rejected>();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->reason, token_rejection::forged);
}

}  // namespace
}  // namespace kvsim::core::rank_lives_test
