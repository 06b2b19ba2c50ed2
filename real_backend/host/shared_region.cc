#include "real_backend/host/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

constexpr std::uint64_t region_magic = 0x6b7673696d68706cULL;  // "kvsimhpl"
constexpr std::size_t entries_max = 256;
constexpr std::size_t tag_bytes = 48;
constexpr std::size_t piece_alignment = 64;

struct directory_entry {
  char tag[tag_bytes];
  std::uint64_t offset;
  std::uint64_t bytes;
};

// The region's first bytes: who placed what, and where the next piece goes.
struct directory {
  std::uint64_t magic;
  std::uint32_t lock;  // lock_word
  std::uint32_t entries;
  std::uint64_t used;  // bytes from the region's start, directory included
  directory_entry entry[entries_max];
};

std::string errno_text(const char* call) {
  return std::string(call) + " failed: " + std::strerror(errno);
}

std::size_t aligned(std::size_t n) { return (n + piece_alignment - 1) / piece_alignment * piece_alignment; }

std::byte* map(int fd, std::size_t capacity) {
  void* base = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) throw real_backend_error("host data plane: " + errno_text("mmap"));
  return static_cast<std::byte*>(base);
}

}  // namespace

void lock_word(std::uint32_t& word) {
  std::atomic_ref<std::uint32_t> w(word);
  for (std::uint32_t spins = 0;; ++spins) {
    std::uint32_t expected = 0;
    if (w.compare_exchange_weak(expected, 1, std::memory_order_acquire)) return;
    if (spins > 64) std::this_thread::yield();
  }
}

void unlock_word(std::uint32_t& word) {
  std::atomic_ref<std::uint32_t>(word).store(0, std::memory_order_release);
}

shared_region shared_region::create(std::size_t capacity_bytes) {
  const int fd = memfd_create("kvsim-host-plane", MFD_CLOEXEC);
  if (fd < 0) throw real_backend_error("host data plane: " + errno_text("memfd_create"));
  return format(fd, capacity_bytes);
}

shared_region shared_region::create_named(const std::string& name, std::size_t capacity_bytes) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, S_IRUSR | S_IWUSR);
  if (fd < 0 && errno == EEXIST) {
    throw launch_error("launcher: the host data plane's shared memory /dev/shm" + name +
                       " exists already (another run with this key and MASTER_PORT, or one "
                       "killed before its rank 1 started; remove it if no run uses it)");
  }
  if (fd < 0) throw real_backend_error("host data plane: " + errno_text(("shm_open " + name).c_str()));
  try {
    return format(fd, capacity_bytes);
  } catch (...) {
    shm_unlink(name.c_str());  // ours: made above, half made
    throw;
  }
}

shared_region shared_region::open_named(const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0 && errno == ENOENT) {
    throw real_backend_error("host data plane: no shared memory /dev/shm" + name +
                             " on this machine (rank 0 makes it on its own: both ranks of "
                             "--data-plane host must run on one machine)");
  }
  if (fd < 0) throw real_backend_error("host data plane: " + errno_text(("shm_open " + name).c_str()));
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    close(fd);
    throw real_backend_error("host data plane: /dev/shm" + name +
                             " is not this user's alone (owner or mode): refused");
  }
  return attach(fd);  // closes fd when it refuses
}

shared_region shared_region::format(int fd, std::size_t capacity_bytes) {
  const std::size_t capacity = aligned(capacity_bytes + sizeof(directory));
  if (ftruncate(fd, static_cast<off_t>(capacity)) != 0) {
    const std::string line = errno_text("ftruncate");
    close(fd);
    throw real_backend_error("host data plane: " + line);
  }
  std::byte* base = nullptr;
  try {
    base = map(fd, capacity);
  } catch (...) {
    close(fd);
    throw;
  }
  shared_region region(fd, base, capacity);
  auto* dir = reinterpret_cast<directory*>(region.base_);
  dir->used = aligned(sizeof(directory));
  std::atomic_ref<std::uint64_t>(dir->magic).store(region_magic, std::memory_order_release);
  return region;
}

shared_region shared_region::attach(int fd) {
  std::size_t capacity = 0;
  std::byte* base = nullptr;
  try {
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      throw real_backend_error("host data plane: fd " + std::to_string(fd) +
                               " from the launching process: " + errno_text("fstat"));
    }
    capacity = static_cast<std::size_t>(st.st_size);
    if (capacity < sizeof(directory)) {
      throw real_backend_error("host data plane: fd " + std::to_string(fd) +
                               " is not a host data plane region (" + std::to_string(capacity) +
                               " bytes)");
    }
    base = map(fd, capacity);
  } catch (...) {
    close(fd);  // ours either way: the region closes it from here on
    throw;
  }
  shared_region region(fd, base, capacity);
  auto* dir = reinterpret_cast<directory*>(region.base_);
  if (std::atomic_ref<std::uint64_t>(dir->magic).load(std::memory_order_acquire) != region_magic) {
    throw real_backend_error("host data plane: fd " + std::to_string(fd) +
                             " is not a host data plane region");
  }
  return region;
}

shared_region::shared_region(shared_region&& other) noexcept
    : fd_(other.fd_), base_(other.base_), capacity_(other.capacity_) {
  other.fd_ = -1;
  other.base_ = nullptr;
  other.capacity_ = 0;
}

shared_region::~shared_region() {
  if (base_ != nullptr) munmap(base_, capacity_);
  if (fd_ >= 0) close(fd_);
}

std::span<std::byte> shared_region::carve(std::string_view tag, std::size_t bytes) {
  if (tag.empty() || tag.size() >= tag_bytes) {
    throw real_backend_error("host data plane: piece name '" + std::string(tag) +
                             "' must be 1.." + std::to_string(tag_bytes - 1) + " characters");
  }
  auto* dir = reinterpret_cast<directory*>(base_);
  lock_word(dir->lock);
  struct unlock_at_end {
    directory* d;
    ~unlock_at_end() { unlock_word(d->lock); }
  } unlock{dir};
  for (std::uint32_t i = 0; i < dir->entries; ++i) {
    const directory_entry& e = dir->entry[i];
    if (tag != std::string_view(e.tag)) continue;
    if (e.bytes != bytes) {
      throw real_backend_error("host data plane: '" + std::string(tag) + "' was placed with " +
                               std::to_string(e.bytes) + " bytes, asked for with " +
                               std::to_string(bytes));
    }
    return {base_ + e.offset, bytes};
  }
  if (dir->entries == entries_max || dir->used + aligned(bytes) > capacity_) {
    throw real_backend_error("host data plane: no room for '" + std::string(tag) + "' (" +
                             std::to_string(bytes) + " bytes; " + std::to_string(capacity_ - dir->used) +
                             " of " + std::to_string(capacity_) + " bytes left, " +
                             std::to_string(entries_max - dir->entries) + " of " +
                             std::to_string(entries_max) + " names)");
  }
  directory_entry& e = dir->entry[dir->entries];
  std::memset(e.tag, 0, tag_bytes);
  std::memcpy(e.tag, tag.data(), tag.size());
  e.offset = dir->used;
  e.bytes = bytes;
  dir->used += aligned(bytes);
  ++dir->entries;
  return {base_ + e.offset, bytes};  // zero: a memfd's fresh pages read as zeros
}

}  // namespace kvsim::real
