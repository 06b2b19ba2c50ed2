// How an NCCL communicator ends, checked on the host (real_backend/nccl/nccl_teardown.h): a
// survivor of a clique where a member aborted aborts too, and so does one with a collective
// unfinished or an asynchronous error; ncclCommDestroy, which waits for the clique's kernels,
// is for a quiet communicator whose clique nobody aborted.
#include "real_backend/nccl/nccl_teardown.h"

#include <gtest/gtest.h>

#include <thread>

namespace kvsim::real::nccl_teardown_test {
namespace {

TEST(NcclTeardown, AQuietCommunicatorIsDestroyed) {
  EXPECT_EQ(how_to_end({}), nccl_end::destroy);
}

TEST(NcclTeardown, AnAbortedCommunicatorIsAlreadyGone) {
  EXPECT_EQ(how_to_end({.aborted = true}), nccl_end::nothing);
  EXPECT_EQ(how_to_end({.aborted = true, .collective_pending = true, .clique_aborted = true}),
            nccl_end::nothing)
      << "ncclCommAbort freed it: a second abort or destroy would touch freed memory";
}

TEST(NcclTeardown, SurvivorsOfAnAbortedCliqueAbortToo) {
  // After ncclCommAbort on one member, ncclCommDestroy on a survivor may block in
  // commReclaim's stream synchronisation.
  EXPECT_EQ(how_to_end({.clique_aborted = true}), nccl_end::abort);
}

TEST(NcclTeardown, AnUnfinishedCollectiveIsAborted) {
  EXPECT_EQ(how_to_end({.collective_pending = true}), nccl_end::abort);
}

TEST(NcclTeardown, AnAsynchronousErrorIsAborted) {
  EXPECT_EQ(how_to_end({.async_error = true}), nccl_end::abort);
}

TEST(NcclTeardown, EveryMemberSeesThatOneAborted) {
  nccl_clique clique;
  EXPECT_FALSE(clique.any_aborted());
  std::thread member([&clique] { clique.member_aborted(); });
  member.join();
  EXPECT_TRUE(clique.any_aborted());
  EXPECT_EQ(how_to_end({.clique_aborted = clique.any_aborted()}), nccl_end::abort);
}

}  // namespace
}  // namespace kvsim::real::nccl_teardown_test
