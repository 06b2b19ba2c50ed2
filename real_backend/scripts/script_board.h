#pragma once
// What the rank threads of a transfer script share when they may be separate processes: a
// few words of the data plane's shared memory (data_plane::shared_words), laid out here.
//   in_flight   the wire tally (wire_tally.h): control messages sent and not yet handled
//   stamps      a counter that orders the findings of every process (finding_log)
//   owners      decode's pages, who holds each as decode's ledger events say (page_owner_view)
// Where the plane has no shared memory (cuda: one process) each piece falls back to memory
// of its own, and the script behaves as before.
#include <cstddef>
#include <cstdint>
#include <span>

namespace kvsim::real {

struct owner_slot {
  std::uint32_t lock = 0;  // lock_word: the fields below change together
  std::uint32_t held = 0;  // 1: `room`/`generation` hold the page
  std::uint32_t generation = 0;
  std::uint32_t unused = 0;
  std::uint64_t room = 0;
};

struct board_head {
  std::int64_t in_flight = 0;
  std::uint64_t stamps = 0;
};

inline std::size_t board_bytes(std::uint32_t pages) {
  return sizeof(board_head) + std::size_t{pages} * sizeof(owner_slot);
}

struct script_board {
  board_head* head = nullptr;          // null: no shared memory
  std::span<owner_slot> owners;

  static script_board over(std::span<std::byte> words, std::uint32_t pages) {
    if (words.size() < board_bytes(pages)) return {};
    return {reinterpret_cast<board_head*>(words.data()),
            {reinterpret_cast<owner_slot*>(words.data() + sizeof(board_head)), pages}};
  }
};

}  // namespace kvsim::real
