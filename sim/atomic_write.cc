// write_file_atomically (declared in sim/trace.h): whole or absent, never through a link that
// was not meant, never truncating the old file before the new one is complete.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include "spec/one_line.h"
#include "sim/trace.h"

namespace kvsim::sim {
namespace {

// Links followed at most, as the kernel's own limit (ELOOP beyond).
constexpr int links_followed_max = 40;

std::string reason(int error) { return std::generic_category().message(error); }

// A descriptor closed however the write ends.
class open_descriptor {
 public:
  explicit open_descriptor(int fd = -1) : fd_(fd) {}
  open_descriptor(const open_descriptor&) = delete;
  open_descriptor& operator=(const open_descriptor&) = delete;
  ~open_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return 0;
}

// Where a write to `path` lands: the file at the end of its chain of links (a relative link
// read against the directory holding it), or `path` itself when it is no link. `descriptor`
// is set when the chain leads into /proc (/dev/stdout -> /proc/self/fd/1): such a link names
// an open descriptor, whose "target" may be a pipe or the caller's redirected file, and is
// written through in place, as it always was.
struct landing {
  std::filesystem::path file;
  bool descriptor = false;
};

landing follow_links(const std::filesystem::path& path, const std::string& prefix) {
  landing at{path, false};
  for (int followed = 0; followed <= links_followed_max; ++followed) {
    struct stat status {};
    if (::lstat(at.file.c_str(), &status) != 0 || !S_ISLNK(status.st_mode)) return at;
    std::error_code error;
    const std::filesystem::path target = std::filesystem::read_symlink(at.file, error);
    if (error) throw trace_error(prefix + "cannot read the link: " + error.message());
    at.file = target.is_absolute() ? target : at.file.parent_path() / target;
    if (at.file.lexically_normal().string().starts_with("/proc/")) {
      at.descriptor = true;
      return at;
    }
  }
  throw trace_error(prefix + reason(ELOOP));
}

void write_in_place(const std::filesystem::path& path, std::string_view text,
                    const std::string& prefix) {
  const open_descriptor fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0) throw trace_error(prefix + reason(errno));
  if (const int error = write_all(fd.get(), text); error != 0) throw trace_error(prefix + reason(error));
}

// The temporary file: created beside the target, removed unless it was renamed over it.
class temporary_file {
 public:
  temporary_file(int dir, std::string name) : dir_(dir), name_(std::move(name)) {}
  temporary_file(const temporary_file&) = delete;
  temporary_file& operator=(const temporary_file&) = delete;
  ~temporary_file() {
    if (fd_ >= 0) ::close(fd_);
    if (created_) ::unlinkat(dir_, name_.c_str(), 0);
  }

  // Replaces a stale temporary file of an earlier, interrupted write (or a link planted under
  // its name: unlink removes the link, not what it points at), but nothing else: the
  // exclusive, no-follow create fails on a directory or on anything that came back since.
  int create() {
    ::unlinkat(dir_, name_.c_str(), 0);
    fd_ = ::openat(dir_, name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) return errno;
    created_ = true;
    return 0;
  }
  int write(std::string_view text) { return write_all(fd_, text); }
  // Data on disk before the rename makes it visible: after a crash the target is either the
  // old file or the whole new one.
  int sync_and_close() {
    if (::fsync(fd_) != 0) return errno;
    const int fd = std::exchange(fd_, -1);
    return ::close(fd) == 0 ? 0 : errno;
  }
  // rename(2) replaces the directory entry itself: it never writes through a link.
  int rename_over(const std::string& target) {
    if (::renameat(dir_, name_.c_str(), dir_, target.c_str()) != 0) return errno;
    created_ = false;
    return 0;
  }

 private:
  int dir_;
  std::string name_;
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           std::string_view what, link_policy links) {
  const std::string prefix = spec::echoed(path.string()) + ": cannot write " + std::string(what) + ": ";
  if (!path.has_filename()) throw trace_error(prefix + "the path names a directory, not a file");
  struct stat own {};
  const bool is_link = ::lstat(path.c_str(), &own) == 0 && S_ISLNK(own.st_mode);
  if (is_link && links == link_policy::refuse) {
    throw trace_error(prefix + "it is a symbolic link (kvsim follows no link inside its output directory)");
  }
  const landing at = is_link ? follow_links(path, prefix) : landing{path, false};
  struct stat status {};
  if (::stat(at.file.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) throw trace_error(prefix + "the path names a directory, not a file");
    // A device, a pipe or an open descriptor is written through: renaming over it would
    // replace the node or link instead of writing to what it stands for.
    if (at.descriptor || !S_ISREG(status.st_mode)) return write_in_place(at.file, text, prefix);
  }
  // The target's own directory, opened once: the temporary file, the rename and the sync all
  // happen relative to it, so a directory swapped in mid-write cannot redirect them.
  const std::filesystem::path directory = at.file.has_parent_path() ? at.file.parent_path() : ".";
  const open_descriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) throw trace_error(prefix + reason(errno));
  const std::string name = at.file.filename().string();
  temporary_file temporary(dir.get(), name + ".tmp");
  const std::string shown_temporary = spec::echoed(name + ".tmp");
  const auto check = [&](int error, const std::string& doing) {
    if (error != 0) throw trace_error(prefix + doing + ": " + reason(error));
  };
  check(temporary.create(), "cannot create temporary file " + shown_temporary);
  check(temporary.write(text), "writing " + shown_temporary);
  check(temporary.sync_and_close(), "syncing " + shown_temporary);
  check(temporary.rename_over(name), "renaming " + shown_temporary + " over it");
  // Makes the rename itself durable. Best effort: the new file is already in place.
  ::fsync(dir.get());
}

}  // namespace kvsim::sim
