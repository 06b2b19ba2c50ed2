#pragma once
// The collectives of core::collective as a rank group logs them and the control plane carries
// them (collective_books.h, control_frame.h): the wire value of each kind is its number here.
#include <cstdint>

namespace kvsim::real {

enum class collective_kind : std::uint8_t { all_reduce_min = 0, all_reduce_max = 1, barrier = 2 };
inline constexpr std::uint8_t collective_kind_max = 2;

const char* to_string(collective_kind kind);

}  // namespace kvsim::real
