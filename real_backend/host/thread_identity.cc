#include "real_backend/host/thread_identity.h"

#include <functional>
#include <thread>

namespace kvsim::real {

std::uint64_t std_thread_identity::current_thread() const {
  // Distinct live threads have distinct ids; libstdc++ hashes one to its pthread_t, so the
  // hash is as distinct as the ids (a collision would only make the check miss, never fire).
  return static_cast<std::uint64_t>(std::hash<std::thread::id>{}(std::this_thread::get_id()));
}

const core::thread_identity& host_threads() {
  static const std_thread_identity identity;
  return identity;
}

}  // namespace kvsim::real
