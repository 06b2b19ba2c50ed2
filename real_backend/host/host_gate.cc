#include "real_backend/host/host_gate.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <ctime>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

// Shared (not FUTEX_PRIVATE_FLAG) futexes: the waiter and the opener may be two processes
// mapping the same page.
void futex_wait(std::uint32_t* word, std::uint32_t expected, long timeout_ns) {
  const timespec timeout{0, timeout_ns};
  syscall(SYS_futex, word, FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void futex_wake_all(std::uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

constexpr long recheck_ns = 10'000'000;  // 10 ms

}  // namespace

host_gate::host_gate(std::span<std::byte> words)
    : arrived_(reinterpret_cast<std::uint32_t*>(words.data())),
      open_(reinterpret_cast<std::uint32_t*>(words.data()) + 1) {
  if (words.size() < 2 * sizeof(std::uint32_t))
    throw real_backend_error("host data plane: a gate needs 8 bytes");
}

host_gate::~host_gate() { open(); }

bool host_gate::reached() const {
  return std::atomic_ref<std::uint32_t>(*arrived_).load(std::memory_order_acquire) != 0;
}

bool host_gate::is_open() const {
  return std::atomic_ref<std::uint32_t>(*open_).load(std::memory_order_acquire) != 0;
}

void host_gate::open() {
  std::atomic_ref<std::uint32_t>(*open_).store(1, std::memory_order_release);
  futex_wake_all(open_);
}

void host_gate::arrive_and_wait() {
  std::atomic_ref<std::uint32_t>(*arrived_).store(1, std::memory_order_release);
  std::atomic_ref<std::uint32_t> open(*open_);
  while (open.load(std::memory_order_acquire) == 0) futex_wait(open_, 0, recheck_ns);
}

}  // namespace kvsim::real
