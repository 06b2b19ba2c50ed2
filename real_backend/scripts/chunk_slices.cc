#include "real_backend/scripts/chunk_slices.h"

#include <algorithm>
#include <string>

#include "real_backend/errors.h"

namespace kvsim::real {

std::vector<chunk_slice> slice_chunks(core::room_key key, std::span<const core::page_index> source,
                                      std::span<const core::page_index> destination,
                                      std::size_t chunks) {
  if (destination.size() != source.size()) {
    throw control_plane_error("control plane: decode's metadata for " + core::to_string(key) +
                              " names " + std::to_string(destination.size()) +
                              " destination page(s) for " + std::to_string(source.size()) +
                              " source page(s): refused");
  }
  chunks = std::max<std::size_t>(1, chunks);
  std::vector<chunk_slice> slices;
  slices.reserve(chunks);
  for (std::size_t c = 0; c < chunks; ++c) {
    // Both bounds are within [0, source.size()], which is destination.size() too.
    const std::size_t from = c * source.size() / chunks;
    const std::size_t to = (c + 1) * source.size() / chunks;
    slices.push_back({{source.begin() + from, source.begin() + to},
                      {destination.begin() + from, destination.begin() + to}});
  }
  return slices;
}

}  // namespace kvsim::real
