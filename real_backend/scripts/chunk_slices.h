#pragma once
// A request's pages cut into the chunks prefill sends: source pages are prefill's own, the
// destination pages come from decode's metadata, off the wire. The peer's page list is
// checked, never trusted: it must name exactly one destination page per source page, or the
// cut would read past its end (as it once did: `destination.begin() + to` without a bound).
#include <cstddef>
#include <span>
#include <vector>

#include "core/ids.h"

namespace kvsim::real {

struct chunk_slice {
  std::vector<core::page_index> source;
  std::vector<core::page_index> destination;
};

// `chunks` slices (at least one) of near-equal size, in order. Throws control_plane_error
// (one line naming the request and both counts) when `destination` does not have as many
// pages as `source`.
std::vector<chunk_slice> slice_chunks(core::room_key key, std::span<const core::page_index> source,
                                      std::span<const core::page_index> destination,
                                      std::size_t chunks);

}  // namespace kvsim::real
