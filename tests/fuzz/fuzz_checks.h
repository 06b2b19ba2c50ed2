#pragma once
// What every fuzz target holds its code under test to, besides not crashing: an error is ONE
// line of bounded length (the CLI prints it as it is), and anything else is a finding that
// stops the fuzzer (abort, so libFuzzer saves the input).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>

#include <unistd.h>

namespace kvsim::fuzz {

// Longer than any legal error line (the longest field paths run to a few hundred
// characters), far shorter than the inputs that used to be echoed whole.
inline constexpr std::size_t error_line_max = 4096;

[[noreturn]] inline void finding(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "FUZZ FINDING: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(std::min<std::size_t>(detail.size(), 1000)), detail.data());
  std::abort();
}

inline void require_one_line(std::string_view message) {
  if (message.find('\n') != std::string_view::npos || message.find('\r') != std::string_view::npos) {
    finding("an error message spans several lines", message);
  }
  // Every value from the input is escaped (spec/one_line.h): no control byte, such as a
  // terminal's ESC, reaches the line.
  if (std::any_of(message.begin(), message.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x20 || byte == 0x7f;
      })) {
    finding("an error message holds a control byte", message);
  }
  if (message.size() > error_line_max) finding("an error message is unbounded", message);
  if (message.empty()) finding("an error message is empty", message);
}

// The input as a file, for loaders that read a path (sim::load_trace, kvsim's trace input):
// one file per process, rewritten for every input and removed when the process exits.
inline const std::filesystem::path& scratch_file(std::span<const std::uint8_t> bytes) {
  struct scratch {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("kvsim-fuzz-" + std::to_string(::getpid()) + ".json");
    ~scratch() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  };
  static const scratch file;
  const std::filesystem::path& path = file.path;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) finding("cannot write the scratch file", path.string());
  return path;
}

}  // namespace kvsim::fuzz
