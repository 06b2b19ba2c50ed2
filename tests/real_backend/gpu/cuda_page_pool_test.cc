// KV pages on the GPU: the fill kernel writes the simulator's canary, the verify kernel reads
// it back as its reader would, and tells whose bytes a foreign page holds.
#include "real_backend/cuda/cuda_page_pool.h"

#include <gtest/gtest.h>

#include "real_backend/errors.h"
#include "tests/real_backend/gpu/gpu_test_support.h"

namespace kvsim::real::cuda_page_pool_test {
namespace {

TEST(CudaPagePool, CanaryFillAndVerifyAgreeWithTheHostPattern) {
  KVSIM_REQUIRE_GPU();
  for (const std::uint32_t page_bytes : {64u, 4096u, 65536u}) {
    cuda_page_pool pool(0, 8, page_bytes);
    pool.write_canary(3, {42, 0}, 1);
    const page_check own = pool.verify(3, {42, 0}, 1);
    EXPECT_TRUE(own.intact) << page_bytes;
    const page_check other = pool.verify(3, {42, 1}, 1);
    EXPECT_FALSE(other.intact);
    ASSERT_TRUE(other.found.has_value());
    EXPECT_EQ(*other.found, (canary_identity{42, 0, 1}));
    std::vector<std::uint8_t> expected(page_bytes);
    fill_canary_host(expected.data(), page_bytes, {42, 0, 1});
    EXPECT_EQ(pool.read_page(3), expected) << "device bytes are the host pattern, byte for byte";
  }
}

TEST(CudaPagePool, FreshPagesAreNobodysAndAFlippedByteIsSeen) {
  KVSIM_REQUIRE_GPU();
  cuda_page_pool pool(0, 4, 256);
  const page_check fresh = pool.verify(0, {1, 0}, 0);
  EXPECT_FALSE(fresh.intact);
  EXPECT_FALSE(fresh.found.has_value());
  pool.write_canary(1, {7, 2}, 0);
  pool.write_canary(2, {7, 2}, 1);
  EXPECT_FALSE(pool.verify(2, {7, 2}, 0).intact) << "another logical page of the same request";
  EXPECT_THROW((void)pool.verify(4, {7, 2}, 0), real_backend_error);
}

}  // namespace
}  // namespace kvsim::real::cuda_page_pool_test
