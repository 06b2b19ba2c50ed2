#include "tools/bench/allocation_counter.h"

#include <cstdlib>
#include <new>

// Every C++ allocation goes through these (the sized, aligned and nothrow forms glibc's
// libstdc++ provides call the plain ones or are replaced below); each counts one and then does
// what the library's own would: malloc, and std::bad_alloc when it fails.
namespace {

thread_local std::uint64_t allocations = 0;

void* counted(std::size_t bytes) {
  ++allocations;
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}

}  // namespace

std::uint64_t kvsim::bench::allocations_so_far() { return allocations; }

void* operator new(std::size_t bytes) { return counted(bytes); }
void* operator new[](std::size_t bytes) { return counted(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  ++allocations;
  return std::malloc(bytes == 0 ? 1 : bytes);
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  ++allocations;
  return std::malloc(bytes == 0 ? 1 : bytes);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
