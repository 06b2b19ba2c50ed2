#include "spec/capped_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <system_error>

namespace kvsim::spec {
namespace {

std::string read_error_text(int error) { return std::generic_category().message(error); }

[[noreturn]] void unreadable(const std::string& line) {
  throw capped_read_error(capped_read_error::problem::unreadable, line);
}

// Closes the descriptor however the read ends.
struct read_descriptor {
  int fd;
  ~read_descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string over_cap_text(std::uint64_t bytes, const input_kind& kind) {
  const std::string cap = std::to_string(kind.bytes_max) + "-byte cap for a " + std::string(kind.name);
  if (bytes == 0) return "more than " + std::to_string(kind.bytes_max) + " bytes, over the " + cap;
  return std::to_string(bytes) + " bytes is over the " + cap;
}

std::string read_capped(const std::filesystem::path& path, const input_kind& kind) {
  const std::string name(kind.name);
  const read_descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    const int error = errno;
    if (error == ENOENT) unreadable("no such " + name + " file");
    unreadable("cannot open " + name + ": " + read_error_text(error));
  }
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) unreadable("cannot read " + name + ": " + read_error_text(errno));
  if (S_ISDIR(status.st_mode)) unreadable("is a directory, not a " + name + " file");
  const bool sized = S_ISREG(status.st_mode);
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (sized && size > kind.bytes_max) {
    throw capped_read_error(capped_read_error::problem::over_cap, over_cap_text(size, kind));
  }
  std::string content;
  if (sized) content.reserve(static_cast<std::size_t>(size));
  std::array<char, 65536> buffer{};
  for (;;) {
    // Never more than the cap + 1 byte in all: the file may grow while it is read.
    const std::uint64_t room = kind.bytes_max + 1 - content.size();
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), room));
    const ssize_t got = ::read(file.fd, buffer.data(), want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) unreadable("cannot read " + name + ": " + read_error_text(errno));
    if (got == 0) break;
    content.append(buffer.data(), static_cast<std::size_t>(got));
    if (content.size() > kind.bytes_max) {
      throw capped_read_error(capped_read_error::problem::over_cap,
                              over_cap_text(0, kind));
    }
  }
  return content;
}

}  // namespace kvsim::spec
