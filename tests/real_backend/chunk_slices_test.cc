// Prefill's chunks of a request (real_backend/scripts/chunk_slices.h): the destination pages come
// from decode's metadata, off the wire, and a page list of the wrong length is refused with
// one line instead of being read past its end (as `destination.begin() + to` once was).
#include "real_backend/scripts/chunk_slices.h"

#include <gtest/gtest.h>

#include "real_backend/errors.h"

namespace kvsim::real::chunk_slices_test {
namespace {

std::string refusal(const std::vector<core::page_index>& source,
                    const std::vector<core::page_index>& destination) {
  try {
    (void)slice_chunks({9, 2}, source, destination, 2);
  } catch (const control_plane_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ChunkSlices, PagesAreCutInOrderAndPaired) {
  const std::vector<core::page_index> source{0, 1, 2, 3, 4};
  const std::vector<core::page_index> destination{10, 11, 12, 13, 14};
  const auto slices = slice_chunks({1, 0}, source, destination, 2);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].source, (std::vector<core::page_index>{0, 1}));
  EXPECT_EQ(slices[0].destination, (std::vector<core::page_index>{10, 11}));
  EXPECT_EQ(slices[1].source, (std::vector<core::page_index>{2, 3, 4}));
  EXPECT_EQ(slices[1].destination, (std::vector<core::page_index>{12, 13, 14}));
  EXPECT_EQ(slice_chunks({1, 0}, source, destination, 0).size(), 1u);  // at least one
}

TEST(ChunkSlices, AnOverLongOrShortPageCountFromThePeerIsRefused) {
  const std::vector<core::page_index> source{0, 1, 2};
  EXPECT_EQ(refusal(source, {5, 6, 7, 8, 9, 10, 11}),
            "control plane: decode's metadata for room 9/gen 2 names 7 destination page(s) "
            "for 3 source page(s): refused");
  EXPECT_EQ(refusal(source, {5}),
            "control plane: decode's metadata for room 9/gen 2 names 1 destination page(s) "
            "for 3 source page(s): refused");
  EXPECT_EQ(refusal(source, {}),
            "control plane: decode's metadata for room 9/gen 2 names 0 destination page(s) "
            "for 3 source page(s): refused");
}

}  // namespace
}  // namespace kvsim::real::chunk_slices_test
