#pragma once
// How a communicator ends, decided on the host with no NCCL call, so that the rule can be
// tested without a GPU (tests/real_backend/nccl_teardown_test.cc). What NCCL does, read in
// its source (2.28.9, the version installed here; unchanged in 2.30, src/init.cc):
// - ncclCommDestroy and ncclCommAbort both end in commReclaim. Communicators that one process
//   made together (ncclCommInitAll: one "intra-process clique") free their resources only at
//   the clique's last destroy/abort call, and that call first runs commDestroySync on every
//   member not finalized: a cudaStreamSynchronize of the member's NCCL streams. A kernel still
//   waiting there for a peer that was aborted never ends unless its own communicator's abort
//   flag is set, which only ncclCommAbort (or ncclCommRevoke) sets: NCCL's own comment there
//   reads "every comm aborts, commDestroySync should not be blocked".
// - ncclCommAbort sets the abort flags first ("ask anything that might still be running on
//   the device to quit"), so it ends what ncclCommDestroy would wait for.
// - ncclCommGetAsyncError reports a failure NCCL saw in the background (nccl.h: "whether the
//   comm has encountered any asynchronous errors", a peer's connection lost, say); PyTorch's
//   NCCL watchdog aborts such communicators rather than destroying them (pytorch PR 41052),
//   and so does this.
// Hence the rule: once a member of the clique has aborted, the survivors abort too; so does a
// communicator with a collective still unfinished or an asynchronous error. Only a
// communicator that is quiet and whose clique nobody aborted is destroyed. (A survivor in
// another process cannot see its peer's abort; its own deadline or the asynchronous error
// ends it.)
#include <atomic>

namespace kvsim::real {

// The members of one clique share this: whether any of them has aborted.
class nccl_clique {
 public:
  void member_aborted() { aborted_.store(true, std::memory_order_release); }
  bool any_aborted() const { return aborted_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> aborted_{false};
};

struct nccl_comm_health {
  bool aborted = false;             // this communicator was aborted already (it is gone)
  bool collective_pending = false;  // a collective was enqueued and not seen to finish
  bool async_error = false;         // ncclCommGetAsyncError answered an error
  bool clique_aborted = false;      // another member of its clique aborted
};

enum class nccl_end {
  nothing,  // already aborted: ncclCommAbort freed it
  abort,    // ncclCommAbort: never waits for a peer
  destroy,  // ncclCommDestroy: quiet, and nobody in its clique aborted
};

nccl_end how_to_end(const nccl_comm_health& health);

}  // namespace kvsim::real
