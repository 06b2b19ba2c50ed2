// The real backend's canary is the simulator's, byte for byte (sim/kv_memory.cc): the golden
// bytes below were computed independently from that formula, and the identity header is the
// little-endian layout the simulator's memcpy writes on x86.
#include "real_backend/canary.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvsim::real::canary_test {
namespace {

TEST(Canary, BytesMatchTheSimulatorsFormula) {
  const std::vector<int> a_page_1{144, 209, 242, 179, 12, 245, 222, 23};  // room 42, gen 0, page 1
  const std::vector<int> b_page_0{57, 121, 171, 202, 164, 157, 38, 207};  // room 42, gen 1, page 0
  for (std::uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(canary_byte(42, 0, 1, 16 + i), a_page_1[i]) << "offset " << 16 + i;
    EXPECT_EQ(canary_byte(42, 1, 0, 16 + i), b_page_0[i]) << "offset " << 16 + i;
  }
}

TEST(Canary, HeaderCarriesTheWritersIdentityLittleEndian) {
  std::vector<std::uint8_t> page(64);
  fill_canary_host(page.data(), 64, {0x0102030405060708ULL, 0x0a0b0c0d, 3});
  EXPECT_EQ(page[0], 0x08);
  EXPECT_EQ(page[7], 0x01);
  EXPECT_EQ(page[8], 0x0d);
  EXPECT_EQ(page[11], 0x0a);
  EXPECT_EQ(page[12], 3);
  EXPECT_EQ(claimed_identity_host(page.data()),
            (canary_identity{0x0102030405060708ULL, 0x0a0b0c0d, 3}));
}

TEST(Canary, AReaderTellsItsOwnBytesFromAnotherRequestsAndFromGarbage) {
  std::vector<std::uint8_t> page(64);
  fill_canary_host(page.data(), 64, {42, 0, 1});
  EXPECT_TRUE(matches_canary_host(page.data(), 64, {42, 0, 1}));
  EXPECT_FALSE(matches_canary_host(page.data(), 64, {42, 1, 1}));
  EXPECT_EQ(owner_of_bytes_host(page.data(), 64), (canary_identity{42, 0, 1}));
  page[40] ^= 1;
  EXPECT_FALSE(matches_canary_host(page.data(), 64, {42, 0, 1}));
  EXPECT_FALSE(owner_of_bytes_host(page.data(), 64).has_value());
  const std::vector<std::uint8_t> zeros(64, 0);
  EXPECT_FALSE(owner_of_bytes_host(zeros.data(), 64).has_value()) << "fresh pages are nobody's";
}

}  // namespace
}  // namespace kvsim::real::canary_test
