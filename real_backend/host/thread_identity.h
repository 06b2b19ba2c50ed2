#pragma once
// core::thread_identity on real hardware: the calling std::thread, by its id, hashed to the
// port's integer. The core checks a bound component's every call against it
// (core/owner_thread.h), so a call from a thread that does not own the component aborts the
// process at that call instead of racing with the owner.
//
// Ids are those of live threads: the library may hand a finished thread's id to a new one,
// so a component must not outlive its owner thread (the rank threads destroy what they
// built before they return: real_backend/host/rank_thread.h).
#include <cstdint>

#include "core/owner_thread.h"

namespace kvsim::real {

class std_thread_identity final : public core::thread_identity {
 public:
  std::uint64_t current_thread() const override;
};

// One identity for the whole process: components keep a pointer to the identity they were
// bound with, so it must outlive every one of them.
const core::thread_identity& host_threads();

}  // namespace kvsim::real
