#pragma once
// How large an input file kvsim reads may be, per kind, checked before any of it is parsed.
// A JSON document costs about 16 times its size once parsed (a 120 MB trace took 1.98 GB),
// so these caps bound what a file can make kvsim allocate; each is far above what kvsim
// writes (the largest trace of the catalogue's worlds is a few MB, a catalogue a few KB).
// docs/cli.md ("Limits") states them.
#include <cstdint>
#include <string_view>

namespace kvsim::spec {

struct input_kind {
  std::string_view name;    // "trace": the error line says "... cap for a trace"
  std::uint64_t bytes_max;  // a file of more bytes is refused unread
};

inline constexpr std::uint64_t mebibyte = 1024 * 1024;

// kvsim replay, check, shrink, export: a trace file.
inline constexpr input_kind trace_input{"trace", 64 * mebibyte};
// --catalogue FILE, the installed catalogue, a logged incident's scenario file.
inline constexpr input_kind catalogue_input{"catalogue", 8 * mebibyte};
// kvsim merge: one shard's explore --json file.
inline constexpr input_kind merge_input{"merge input", 16 * mebibyte};

}  // namespace kvsim::spec
