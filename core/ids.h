#pragma once
// Identities shared by every part of the core. Kept in one small header so that events,
// the ledger, the lifetime tracker and the tokens all speak about the same things.
#include <compare>
#include <cstdint>
#include <span>
#include <string>

namespace kvsim::core {

// A bootstrap room is a request's transfer id chosen by the router. Room ids ARE reused
// (DOMAIN.md), so a room alone never identifies a request; (room, generation) does.
using room_id = std::uint64_t;
using generation_t = std::uint32_t;
using page_index = std::uint32_t;
using lease_id = std::uint64_t;
using rank_id = std::uint32_t;
// A store job's identity, issued by the rank that starts it and never reused: a completion is
// counted against the job it names, never against whichever request now holds its room.
using store_job_id = std::uint64_t;

// The identity that owns pages and leases: one request incarnation on one room.
struct room_key {
  room_id room = 0;
  generation_t generation = 0;

  friend auto operator<=>(const room_key&, const room_key&) = default;
};

std::string to_string(const room_key& key);

// "[3,4,5]": how every event and finding prints a list of pages.
std::string pages_text(std::span<const page_index> pages);

// Which side of a transfer a lease protects: prefill reads source pages, decode's pages
// are the destination that the transport writes into.
enum class lease_role : std::uint8_t { source, destination };

const char* to_string(lease_role role);

}  // namespace kvsim::core
