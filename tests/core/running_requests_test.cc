#include "core/running_requests.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/recording_sink.h"

namespace kvsim::core::running_requests_test {
namespace {

using testing::recording_sink;

constexpr rank_id rank = 1;
const room_key first{5, 0};
const room_key resumed{5, 1};  // the first's next incarnation after a preemption
const room_key other{6, 0};

// Records what was submitted; completions are the test's to deliver.
class recording_store final : public store_engine {
 public:
  struct submitted {
    store_job_id job;
    room_key owner;
    std::vector<page_index> pages;
  };
  void submit(store_job_id job, room_key owner, const std::vector<page_index>& pages) override {
    jobs.push_back({job, owner, pages});
  }
  std::vector<submitted> jobs;
};

class RunningRequests : public ::testing::Test {
 protected:
  explicit RunningRequests(variant v = variant::safe(), store_limits limits = {})
      : ledger(rank, 8, sink), running(rank, ledger, &store, sink, v, limits) {}

  // `key` gets `count` pages and runs on them, as the receiver hands a finished transfer over.
  std::vector<page_index> run(room_key key, std::uint32_t count = 2) {
    std::vector<page_index> pages = ledger.allocate(key, count).value();
    EXPECT_TRUE(running.adopt(key, pages));
    return pages;
  }
  bool all_free(const std::vector<page_index>& pages) const {
    for (page_index p : pages) {
      if (ledger.owner_of(p)) return false;
    }
    return true;
  }
  void expect_consistent() const {
    EXPECT_TRUE(ledger.check_consistency().empty());
    EXPECT_TRUE(running.check_consistency().empty());
  }

  recording_sink sink;
  recording_store store;
  page_ledger ledger;
  running_requests running;
};

TEST_F(RunningRequests, FinishWithoutAStoreFreesThePagesAtOnce) {
  const auto pages = run(first);
  running.finish(first);
  EXPECT_TRUE(all_free(pages));
  EXPECT_FALSE(running.running(first));
  EXPECT_EQ(sink.last<request_finished>()->outcome, request_outcome::succeeded);
  expect_consistent();
}

TEST_F(RunningRequests, AStoreJobKeepsAFinishedRequestsPagesUntilItsCompletion) {
  const auto pages = run(first);
  const auto job = running.store(first);
  ASSERT_TRUE(job.has_value());
  ASSERT_EQ(store.jobs.size(), 1u);
  EXPECT_EQ(store.jobs[0].pages, pages);
  running.finish(first);
  EXPECT_EQ(sink.last<running_request_ended>()->deferred, 2u);
  EXPECT_FALSE(all_free(pages));  // the write-back still reads them
  running.on_store_done(*job, first, true);
  EXPECT_TRUE(all_free(pages));
  EXPECT_EQ(running.stores_in_flight(), 0u);
  expect_consistent();
}

TEST_F(RunningRequests, APreemptedRequestsOffloadKeepsItsPagesAndTheResumeTakesOthers) {
  const auto pages = run(first);
  const auto job = running.store(first);
  running.preempt(first);
  EXPECT_EQ(sink.last<request_finished>()->outcome, request_outcome::preempted);
  const auto fresh = running.resume(resumed, 2);
  ASSERT_TRUE(fresh.has_value());
  for (page_index p : *fresh) EXPECT_EQ(std::count(pages.begin(), pages.end(), p), 0);
  running.on_store_done(*job, first, true);
  EXPECT_TRUE(all_free(pages));
  EXPECT_TRUE(running.running(resumed));
  expect_consistent();
}

// The completion of the old incarnation's job counts for that job only (vllm#51637's ABA).
TEST_F(RunningRequests, AnOldIncarnationsCompletionNeverEndsANewIncarnationsJob) {
  run(first);
  const auto old_job = running.store(first);
  running.preempt(first);
  const auto fresh = *running.resume(resumed, 2);
  const auto new_job = running.store(resumed);
  running.finish(resumed);
  running.on_store_done(*old_job, first, true);
  EXPECT_FALSE(all_free(fresh));  // the new incarnation's write-back still reads them
  EXPECT_TRUE(running.storing(resumed));
  running.on_store_done(*new_job, resumed, true);
  EXPECT_TRUE(all_free(fresh));
  expect_consistent();
}

TEST_F(RunningRequests, ADuplicateOrForeignCompletionIsIgnoredWithItsReason) {
  run(first);
  const auto job = *running.store(first);
  running.on_store_done(job, other, true);
  EXPECT_EQ(sink.last<store_completion_ignored>()->reason, store_ignore_reason::owner_mismatch);
  running.on_store_done(job, first, true);
  running.on_store_done(job, first, true);
  EXPECT_EQ(sink.last<store_completion_ignored>()->reason, store_ignore_reason::already_counted);
  running.on_store_done(999, first, true);
  EXPECT_EQ(sink.last<store_completion_ignored>()->reason, store_ignore_reason::not_in_flight);
  expect_consistent();
}

TEST_F(RunningRequests, CallsForAKeyThatDoesNotRunAreRefusedAndChangeNothing) {
  const auto pages = run(first);
  EXPECT_FALSE(running.adopt(first, pages));
  EXPECT_EQ(sink.last<running_call_refused>()->reason, running_refusal::already_running);
  running.finish(other);
  EXPECT_EQ(sink.last<running_call_refused>()->reason, running_refusal::not_running);
  running.preempt(other);
  EXPECT_FALSE(running.store(other).has_value());
  const std::vector<page_index> not_owned{7};
  EXPECT_FALSE(running.adopt(other, not_owned));
  EXPECT_EQ(sink.last<running_call_refused>()->reason, running_refusal::pages_not_owned);
  EXPECT_TRUE(running.running(first));
  expect_consistent();
}

class BoundedStoreTable : public RunningRequests {
 protected:
  BoundedStoreTable() : RunningRequests(variant::safe(), store_limits{1, 1}) {}
};

TEST_F(BoundedStoreTable, AFullTableRefusesAStoreAndTheRecordForgetsItsOldest) {
  run(first);
  run(other);
  const auto job = running.store(first);
  ASSERT_TRUE(job.has_value());
  EXPECT_FALSE(running.store(other).has_value());
  EXPECT_EQ(sink.count<store_job_refused>(), 1u);
  running.on_store_done(*job, first, true);
  const auto second = running.store(other);
  ASSERT_TRUE(second.has_value());
  running.on_store_done(*second, other, true);
  EXPECT_EQ(sink.last<store_completion_forgotten>()->job, *job);
  EXPECT_EQ(running.jobs().remembered(), 1u);
  expect_consistent();
}

TEST(RunningRequestsWithoutAStoreEngine, AStoreIsRefused) {
  recording_sink sink;
  page_ledger ledger(rank, 4, sink);
  running_requests running(rank, ledger, nullptr, sink, variant::safe());
  ASSERT_TRUE(running.adopt(first, ledger.allocate(first, 1).value()));
  EXPECT_FALSE(running.store(first).has_value());
  EXPECT_EQ(sink.last<running_call_refused>()->reason, running_refusal::no_store_engine);
}

// Red before green: each historical variant breaks exactly the rule above it.
class HistoricalStoreBugs : public RunningRequests {
 protected:
  explicit HistoricalStoreBugs(bug b) : RunningRequests(variant::with(b)) {}
};

class B13 : public HistoricalStoreBugs {
 protected:
  B13() : HistoricalStoreBugs(bug::b13_store_done_by_request) {}
};
TEST_F(B13, AnOldIncarnationsCompletionEndsTheNewOnesLease) {
  const auto pages = run(first);
  const auto old_job = running.store(first);
  running.preempt(first);
  const auto fresh = *running.resume(resumed, 2);
  (void)running.store(resumed);
  running.finish(resumed);
  running.on_store_done(*old_job, first, true);
  EXPECT_TRUE(all_free(fresh));    // freed while the new write-back still reads
  EXPECT_FALSE(all_free(pages));   // and the old job's lease never ends
  EXPECT_TRUE(running.storing(first));
}

class B14 : public HistoricalStoreBugs {
 protected:
  B14() : HistoricalStoreBugs(bug::b14_preempt_drops_store) {}
};
TEST_F(B14, PreemptionFreesPagesItsOffloadStillReads) {
  const auto pages = run(first);
  (void)running.store(first);
  running.preempt(first);
  EXPECT_TRUE(all_free(pages));
  EXPECT_EQ(sink.count<store_job_abandoned>(), 1u);
}

class B15 : public HistoricalStoreBugs {
 protected:
  B15() : HistoricalStoreBugs(bug::b15_unleased_store) {}
};
TEST_F(B15, AFinishFreesPagesItsWriteBackStillReads) {
  const auto pages = run(first);
  const auto job = running.store(first);
  ASSERT_TRUE(job.has_value());
  running.finish(first);
  EXPECT_TRUE(all_free(pages));
  EXPECT_FALSE(sink.last<store_job_started>()->lease.has_value());
}

}  // namespace
}  // namespace kvsim::core::running_requests_test
