#include "real_backend/launch/step_channel.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <sys/socket.h>

#include "real_backend/errors.h"

namespace kvsim::real {

step_channel::~step_channel() { close(fd_); }

bool step_channel::write_line(const std::string& line) {
  std::string out = line;
  for (char& c : out) {
    if (c == '\n') c = ' ';
  }
  out += '\n';
  const std::lock_guard lock(write_mutex_);
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = send(fd_, out.data() + done, out.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> step_channel::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw peer_gone("the step channel closed");
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace kvsim::real
