#pragma once
// Reads an input file whole, but never more than its kind's cap (spec/input_caps.h) + 1 byte:
// a regular file's size is taken from the open descriptor (fstat) before reading, and a pipe
// or device is read until it passes the cap. Errors are one line without the file's name
// (the caller prefixes it): "67108865 bytes is over the 67108864-byte cap for a trace".
#include <filesystem>
#include <stdexcept>
#include <string>

#include "spec/input_caps.h"

namespace kvsim::spec {

class capped_read_error : public std::runtime_error {
 public:
  enum class problem { unreadable, over_cap };
  capped_read_error(problem what, const std::string& line) : std::runtime_error(line), problem_(what) {}
  problem what_problem() const noexcept { return problem_; }

 private:
  problem problem_;
};

// "no such trace file", "is a directory, not a trace file", "cannot open trace: <errno>",
// "cannot read trace: <errno>", or over the cap.
std::string read_capped(const std::filesystem::path& path, const input_kind& kind);

// "N bytes is over the M-byte cap for a trace"; N unknown (a pipe): "more than M bytes ...".
std::string over_cap_text(std::uint64_t bytes, const input_kind& kind);

}  // namespace kvsim::spec
