#pragma once
// The line protocol between a `kvsim real --ranks 2` parent and a rank process it started:
// a socketpair the parent made, one end inherited by the child (KVSIM_SCRIPT_FD). Nothing
// on the network can reach it, so it carries no key. One line per message:
//   parent -> rank: "ask ID STEP R", "watch ID STEP R", "cancel ID", "findings ID",
//                   "events ID", "stop ID", "exit"
//   rank -> parent: "listening", "ready", "answer ID TEXT", "fired ID", "failed LINE"
// (A HiCache rank process, prefetch_processes.h, takes "connect ID", "run ID", "findings ID",
// "events ID", "stop ID" and "exit" instead: script_request.h's served_script::prefetch.)
// (Between ranks that torchrun or srun started, rank 0 in the parent's role, the same lines
// go as step frames, control_step_link.h; rank 0 first says "region NAME BYTES" there.)
#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "real_backend/launch/step_link.h"

namespace kvsim::real {

inline constexpr const char* script_fd_variable = "KVSIM_SCRIPT_FD";

class step_channel final : public step_link {
 public:
  explicit step_channel(int fd) : fd_(fd) {}
  ~step_channel() override;
  step_channel(const step_channel&) = delete;
  step_channel& operator=(const step_channel&) = delete;

  // One line (a newline inside `line` is replaced: it would split the message). Thread-safe.
  // False when the other end has gone.
  bool write_line(const std::string& line) override;
  // The next line; empty when none came within `timeout`; throws peer_gone once the other
  // end has closed. One reader at a time.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) override;

 private:
  int fd_;
  std::mutex write_mutex_;
  std::string buffer_;
};

}  // namespace kvsim::real
