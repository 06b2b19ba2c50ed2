#pragma once
// Memory that every process of a host-data-plane run maps: one memfd (memfd_create), sized
// once, mapped MAP_SHARED by the parent and inherited by the rank processes it starts (the fd
// number travels in KVSIM_HOST_PLANE_FD). Ranks that torchrun or srun started have no common
// parent: rank 0 makes a named POSIX shared-memory object instead (shm_open, /dev/shm on
// Linux: on one machine only) and rank 1 opens it by name (launched_run.h). The host data plane carves its pieces out of it by
// name ("pages/1", "gate/0", "board"): the first process to ask for a name places it, the
// others find it, so the processes need not build their pieces in the same order.
//
// The memory starts zeroed (a new memfd reads as zeros and is backed only where touched), so
// every lock, flag and counter placed in it starts at zero without anyone initialising it.
// Those words are used through std::atomic_ref: lock-free atomics are address-free, which is
// what makes them work between processes mapping the same pages.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kvsim::real {

class shared_region {
 public:
  // A fresh region of `capacity_bytes` (sparse: untouched pages cost nothing).
  static shared_region create(std::size_t capacity_bytes);
  // The region another process created, from the fd it handed down (close-on-exec is cleared
  // by the parent for the children only). The region owns `fd`, and closes it when refused.
  static shared_region attach(int fd);
  // A fresh region as the named shared-memory object `name` ("/kvsim-..."), created
  // exclusively and readable and writable by its owner only. One that exists already is a
  // launch_error (another run's, or a leftover): nothing is created or removed then.
  static shared_region create_named(const std::string& name, std::size_t capacity_bytes);
  // The region `name` that another process of this user created on this machine; refused
  // when missing, owned by someone else or open to group or others.
  static shared_region open_named(const std::string& name);

  shared_region(shared_region&& other) noexcept;
  shared_region& operator=(shared_region&&) = delete;
  shared_region(const shared_region&) = delete;
  ~shared_region();

  int fd() const { return fd_; }
  std::size_t capacity_bytes() const { return capacity_; }

  // The piece named `tag` (at most 47 characters), `bytes` long and 64-byte aligned, zeroed
  // when first placed. Asking for a known tag with another size is a real_backend_error, and
  // so is a region too full for it.
  std::span<std::byte> carve(std::string_view tag, std::size_t bytes);

 private:
  shared_region(int fd, std::byte* base, std::size_t capacity)
      : fd_(fd), base_(base), capacity_(capacity) {}
  // Sizes the new object behind `fd` and writes its directory; closes `fd` when it fails.
  static shared_region format(int fd, std::size_t capacity_bytes);
  int fd_ = -1;
  std::byte* base_ = nullptr;
  std::size_t capacity_ = 0;
};

// The environment variable that names the region's fd in a rank process.
inline constexpr const char* host_plane_fd_variable = "KVSIM_HOST_PLANE_FD";

// A spin lock in shared memory: a 32-bit word, 0 free, 1 held. Held for a page copy or a
// page check at most (microseconds), so spinning with a yield is cheaper than a futex.
void lock_word(std::uint32_t& word);
void unlock_word(std::uint32_t& word);

}  // namespace kvsim::real
