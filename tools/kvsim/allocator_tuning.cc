#include "tools/kvsim/allocator_tuning.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace kvsim::tools {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool malloc_is_replaced = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
constexpr bool malloc_is_replaced = true;
#else
constexpr bool malloc_is_replaced = false;
#endif
#else
constexpr bool malloc_is_replaced = false;
#endif

#if defined(__GLIBC__)
constexpr bool is_glibc = true;
#else
constexpr bool is_glibc = false;
#endif

std::string current_tunables() {
  const char* value = std::getenv("GLIBC_TUNABLES");
  return value != nullptr ? value : "";
}

bool sets_tcache_count(const std::string& tunables) {
  return tunables.find("glibc.malloc.tcache_count=") != std::string::npos;
}

}  // namespace

bool allocator_tuning_possible() { return is_glibc && !malloc_is_replaced; }

void tune_allocator_or_restart(char** argv) {
  if (!allocator_tuning_possible()) return;
  if (std::getenv(allocator_tuning_variable) != nullptr) return;
  const std::string before = current_tunables();
  if (sets_tcache_count(before)) return;
  const std::string tuned =
      before.empty() ? std::string(allocator_tunable) : before + ":" + allocator_tunable;
  // Marked done first, so that the second start (or a start that inherits this environment)
  // never executes itself again.
  if (setenv(allocator_tuning_variable, "done", 1) != 0) return;
  if (setenv("GLIBC_TUNABLES", tuned.c_str(), 1) != 0) {
    unsetenv(allocator_tuning_variable);
    return;
  }
  execv("/proc/self/exe", argv);
  // Still here: no /proc, or the binary is gone. Go on untuned, with the environment as it was.
  if (before.empty()) {
    unsetenv("GLIBC_TUNABLES");
  } else {
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  }
  unsetenv(allocator_tuning_variable);
}

std::string allocator_tuning_in_effect() {
  if (!allocator_tuning_possible()) return "allocator defaults";
  const std::string tunables = current_tunables();
  const auto at = tunables.find("glibc.malloc.tcache_count=");
  if (at == std::string::npos) return "allocator defaults";
  return tunables.substr(at, tunables.find(':', at) - at);
}

}  // namespace kvsim::tools
