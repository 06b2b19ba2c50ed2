#pragma once
// One rank's pool of HiCache host pages, as SGLang's host memory pool hands them out: a
// request takes the lowest free pages, and a freed page is at once available to the next
// request, so a late write into a freed page lands in whoever holds it next. The pool keeps
// no judgement of its own: it applies the core's host_pages_freed decisions as they are
// made (a double free simply frees again; the checkers judge, properties/host_page_checker).
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"

namespace kvsim::sim {

class host_page_pool {
 public:
  explicit host_page_pool(std::uint32_t pages) : free_(pages, true) {}

  // The `count` lowest free pages, now taken; nothing when fewer are free.
  std::optional<std::vector<core::page_index>> allocate(std::uint32_t count) {
    std::vector<core::page_index> taken;
    for (core::page_index p = 0; p < free_.size() && taken.size() < count; ++p) {
      if (free_[p]) taken.push_back(p);
    }
    if (taken.size() < count) return std::nullopt;
    for (core::page_index p : taken) free_[p] = false;
    return taken;
  }
  void free(const std::vector<core::page_index>& pages) {
    for (core::page_index p : pages) {
      if (p < free_.size()) free_[p] = true;
    }
  }
  std::uint32_t free_pages() const {
    std::uint32_t n = 0;
    for (bool f : free_) n += f ? 1 : 0;
    return n;
  }

 private:
  std::vector<bool> free_;
};

}  // namespace kvsim::sim
