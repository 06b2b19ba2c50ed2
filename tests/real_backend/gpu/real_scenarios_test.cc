// The catalogue's scripted scenarios on the GPU(s), red then green: with its breaking variant
// every scenario the real backend scripts is found, with the invariant the data shows first;
// with `safe` none is. NCCL agrees on MIN and MAX across the devices present.
#include <gtest/gtest.h>

#include <future>

#include "real_backend/cuda/cuda_data_plane.h"
#include "real_backend/nccl/nccl_comm.h"
#include "real_backend/scripts/prefetch_script.h"
#include "real_backend/scripts/script_support.h"
#include "real_backend/scripts/transfer_script.h"
#include "tests/real_backend/catalogue_lookup.h"
#include "tests/real_backend/gpu/gpu_test_support.h"

namespace kvsim::real::real_scenarios_test {
namespace {

using testing::from_catalogue;
using testing::invariants_of;
using testing::lines_of;

real_outcome run_on_gpu(const std::string& scenario, const std::string& variant) {
  const scenarios::scenario_spec spec = from_catalogue(scenario);
  const std::uint32_t ranks =
      spec.kind == scenarios::scenario_kind::transfer ? 2 : spec.topology.attention_group;
  std::vector<int> devices;
  for (int d = 0; d < testing::gpu_probe().count && devices.size() < ranks; ++d)
    devices.push_back(d);
  cuda_data_plane plane(devices);
  return spec.kind == scenarios::scenario_kind::transfer
             ? run_transfer_script(spec, *real_variant(variant), variant, plane)
             : run_prefetch_script(spec, *real_variant(variant), variant, plane);
}

TEST(RealScenarios, Page42RedOnTheDevice) {
  KVSIM_REQUIRE_GPU();
  const real_outcome o = run_on_gpu("page42", "B1");
  EXPECT_EQ(invariants_of(o.findings), "I3,I1,I7") << lines_of(o.findings);
  EXPECT_EQ(o.backend, "cuda");
}

TEST(RealScenarios, Page42GreenOnTheDevice) {
  KVSIM_REQUIRE_GPU();
  const real_outcome o = run_on_gpu("page42", "safe");
  EXPECT_TRUE(o.findings.empty()) << lines_of(o.findings);
}

TEST(RealScenarios, EveryScriptedScenarioIsRedWithItsBugAndGreenWhenSafe) {
  KVSIM_REQUIRE_GPU();
  for (const scenarios::scenario_spec& s : scenarios::load_catalogue(KVSIM_CATALOGUE)) {
    if (unscripted_reason(s)) continue;
    const real_outcome red = run_on_gpu(s.name, s.expect.breaking_variant);
    EXPECT_FALSE(red.findings.empty()) << s.name << " with " << s.expect.breaking_variant;
    const real_outcome green = run_on_gpu(s.name, "safe");
    EXPECT_TRUE(green.findings.empty()) << s.name << " safe:\n" << lines_of(green.findings);
  }
}

TEST(RealScenarios, HiCacheCasesMatchTheSimulatorsInvariants) {
  KVSIM_REQUIRE_GPU();
  EXPECT_EQ(run_on_gpu("hicache_local_missing", "H1").findings.front().invariant, "I5");
  EXPECT_EQ(run_on_gpu("hicache_local_pending", "H1").findings.front().invariant, "I5");
  EXPECT_EQ(run_on_gpu("hicache_local_active", "H2").findings.front().invariant, "I6");
}

TEST(Nccl, AllReduceMinMaxAcrossTheDevicesPresent) {
  KVSIM_REQUIRE_GPU();
  std::vector<int> devices;
  for (int d = 0; d < testing::gpu_probe().count; ++d) devices.push_back(d);
  auto comms = nccl_communicator::create_local(devices);
  nccl_communicator::warm_up(comms);
  std::vector<std::future<std::pair<std::int64_t, std::int64_t>>> results;
  for (std::size_t i = 0; i < comms.size(); ++i) {
    results.push_back(std::async(std::launch::async, [&, i] {
      const wait_policy policy{std::chrono::steady_clock::now() + std::chrono::seconds(30), {}};
      const auto value = static_cast<std::int64_t>(100 + i);
      const std::int64_t low = comms[i]->all_reduce(value, core::reduce_op::min, policy);
      const std::int64_t high = comms[i]->all_reduce(value, core::reduce_op::max, policy);
      comms[i]->barrier(policy);
      return std::pair(low, high);
    }));
  }
  for (auto& r : results) {
    EXPECT_EQ(r.get(), (std::pair<std::int64_t, std::int64_t>(
                           100, 100 + static_cast<std::int64_t>(devices.size()) - 1)));
  }
}

}  // namespace
}  // namespace kvsim::real::real_scenarios_test
