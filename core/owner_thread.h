#pragma once
// The core's threading contract: every component is a single-threaded actor. One owner
// thread (or, in the simulator, the one host thread that runs every fiber) makes every call
// on a component and on the state it was given (ledger, room lifetimes, status table,
// verifier); nothing in the core locks. Work that arrives on another thread (a transport's
// completion callback, a control connection's reader) is handed to the owner as a message
// and delivered by it, never called in directly.
//
// The core may not name threads (tools/check_layers.sh), so who is calling comes through a
// port. A component bound to one (bind_owner) checks every public call against the thread
// that bound it and aborts on a call from any other: a race found at its first wrong call,
// not as a corrupted page much later. Unbound components check nothing (the simulator, where
// one thread runs everything, and single-threaded tests). The check is one virtual call per
// entry point and stays on in every build type, like every invariant of the core.
#include <cstdint>

#include "core/invariant.h"

namespace kvsim::core {

// Names the calling thread; implemented by whoever owns the threads (real_backend: the
// std::thread id, hashed). Must be callable from any thread.
class thread_identity {
 public:
  virtual ~thread_identity() = default;
  virtual std::uint64_t current_thread() const = 0;
};

// Held by each actor component; bind once, check at every entry point.
class single_owner {
 public:
  // The calling thread owns the component from now on.
  void bind(const thread_identity& identity) {
    identity_ = &identity;
    owner_ = identity.current_thread();
  }
  void check() const {
    if (identity_ == nullptr) return;
    KVSIM_INVARIANT(identity_->current_thread() == owner_,
                    "a core component was called from a thread that does not own it "
                    "(docs/core-api.md, threading contract)");
  }
  bool bound() const { return identity_ != nullptr; }

 private:
  const thread_identity* identity_ = nullptr;
  std::uint64_t owner_ = 0;
};

}  // namespace kvsim::core
