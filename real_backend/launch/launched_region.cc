#include "real_backend/launch/launched_region.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <mutex>

namespace kvsim::real {
namespace {

// What the signal handler reads: a few fixed slots, each a /dev/shm path written before the
// slot is marked armed, and the actions the three signals had before the handler came. Plain
// memory and lock-free atomics only: nothing the handler touches allocates or locks.
constexpr int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr std::size_t signal_count = sizeof stop_signals / sizeof stop_signals[0];
constexpr std::size_t slot_count = 8;         // owners at once; rank 0 has one
constexpr std::size_t path_max = 9 + 255 + 1;  // "/dev/shm" + a name of NAME_MAX + NUL
enum slot_state : int { slot_free, slot_filling, slot_armed };

struct name_slot {
  std::atomic<int> state{slot_free};
  char path[path_max]{};
};
static_assert(std::atomic<int>::is_always_lock_free);

name_slot slots[slot_count];
struct sigaction earlier[signal_count];
std::once_flag handlers_installed;

extern "C" void remove_names_and_stop(int signal) {
  const int saved_errno = errno;
  for (name_slot& slot : slots) {
    if (slot.state.load() == slot_armed) unlink(slot.path);  // shm_unlink's own file
  }
  // The action the signal had before: once this returns, the raised signal (held back until
  // then) kills the process as it would have, or reaches the earlier handler.
  for (std::size_t i = 0; i < signal_count; ++i) {
    if (stop_signals[i] == signal) sigaction(signal, &earlier[i], nullptr);
  }
  raise(signal);
  errno = saved_errno;
}

void install_handlers() {
  struct sigaction action {};
  action.sa_handler = remove_names_and_stop;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (const int signal : stop_signals) sigaddset(&action.sa_mask, signal);
  for (std::size_t i = 0; i < signal_count; ++i) {
    if (sigaction(stop_signals[i], nullptr, &earlier[i]) != 0) continue;
    if (!(earlier[i].sa_flags & SA_SIGINFO) && earlier[i].sa_handler == SIG_IGN) continue;
    sigaction(stop_signals[i], &action, nullptr);
  }
}

// The slot now holding `name`'s path; -1 when none is free or the name does not fit (the
// name is then removed by remove() and the destructor only).
int arm(const std::string& name) {
  static constexpr char dir[] = "/dev/shm";
  if (name.empty() || name[0] != '/' || sizeof dir + name.size() > path_max) return -1;
  std::call_once(handlers_installed, install_handlers);
  for (std::size_t i = 0; i < slot_count; ++i) {
    int expected = slot_free;
    if (!slots[i].state.compare_exchange_strong(expected, slot_filling)) continue;
    std::memcpy(slots[i].path, dir, sizeof dir - 1);
    std::memcpy(slots[i].path + sizeof dir - 1, name.c_str(), name.size() + 1);
    slots[i].state.store(slot_armed);
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::string launched_region_name(const run_secret& secret, std::uint16_t master_port) {
  return "/kvsim-hp-" + derive_run_tag(secret) + "-" + std::to_string(master_port);
}

region_name_owner::region_name_owner(std::string name) : name_(std::move(name)) {
  slot_ = arm(name_);
}

void region_name_owner::remove() noexcept {
  if (removed_) return;
  removed_ = true;
  shm_unlink(name_.c_str());
  // Disarmed after the name is gone: a signal in between removes it a second time (ENOENT).
  if (slot_ >= 0) slots[slot_].state.store(slot_free);
}

termination_signals_held::termination_signals_held() {
  sigset_t stops;
  sigemptyset(&stops);
  for (const int signal : stop_signals) sigaddset(&stops, signal);
  held_ = pthread_sigmask(SIG_BLOCK, &stops, &previous_) == 0;
}

void termination_signals_held::release() noexcept {
  if (!held_) return;
  held_ = false;
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace kvsim::real
