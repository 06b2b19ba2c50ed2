#pragma once
// The core's ports: everything it needs from the world, and nothing else. The simulator
// (sim/) implements them deterministically over fibers; the real backend (real_backend/)
// implements them with CUDA, NCCL and Boost.Asio. Faults are overlays on these interfaces,
// never branches inside the core. Blocking calls suspend a fiber in the simulator and block
// a host thread on GPUs; the core cannot tell which.
//
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/token_mac.h"
#include "core/events.h"
#include "core/ids.h"
#include "core/kv_status.h"

namespace kvsim::core {

// Where every decision goes. Implementations must not call back into the emitting component.
class event_sink {
 public:
  virtual ~event_sink() = default;
  virtual void emit(const event& e) = 0;
  // How the core's components hand over an event they have just built and will not read
  // again: a sink that keeps events may take it instead of copying it (its page list is a
  // heap vector; the simulator's log keeps every event of every run). Means what emit means.
  virtual void emit_built(event&& e) { emit(e); }
};

// Time as the world sees it: virtual in the simulator, steady host time on GPUs. Deadlines
// in the core are always computed from this, never from a wall clock.
class clock {
 public:
  virtual ~clock() = default;
  virtual std::uint64_t now_us() const = 0;
};

enum class reduce_op : std::uint8_t { min, max };

// One rank's handle on a rank group (the attention group, the TP group). Every member must
// enter the same collectives in the same order (DOMAIN.md I5); the port does not check it,
// the simulator's wait-for graph does.
class collective {
 public:
  virtual ~collective() = default;
  virtual std::uint32_t group_size() const = 0;
  virtual std::uint32_t group_rank() const = 0;
  virtual std::int64_t all_reduce(std::int64_t value, reduce_op op) = 0;
  virtual void barrier() = 0;
};

// A batch page copy from a prefill rank's source pages to a decode rank's destination pages.
struct transfer_request {
  room_key owner;
  rank_id destination_rank = 0;
  std::vector<page_index> source_pages;
  std::vector<page_index> destination_pages;
};

using transfer_handle = std::uint64_t;

enum class transfer_poll : std::uint8_t {
  in_flight,
  succeeded,
  failed,
  // The transport gave up waiting but cannot say the copy stopped (Mooncake's sync wrapper
  // returning -1 at a deadline while the executor still writes, DOMAIN.md B12). Not terminal.
  timed_out_unconfirmed,
};

class transfer_engine {
 public:
  virtual ~transfer_engine() = default;
  virtual transfer_handle submit(const transfer_request& request) = 0;
  virtual transfer_poll poll(transfer_handle handle) = 0;
  // Best effort, like NIXL's release of an active request; Mooncake has none. True only when
  // the transport confirms that no byte of this transfer will be read or written any more.
  virtual bool cancel(transfer_handle handle) = 0;
};

// What a rank knows of a peer it exchanges KV with, as a real engine learns it in two steps.
// First the peer is *lost*: its heartbeat stops or its control connection errors (SGLang's
// bootstrap heartbeat; Mooncake's transfer status turning to a failure). A lost peer's
// one-sided writes already posted to the NIC may still land in our pages. Then the transport
// confirms the connection *torn down* (Mooncake's and NIXL's connection teardown / error
// state of the queue pair): from then on no byte of that peer lands any more. Only the
// second allows reusing pages the peer was writing. A peer never comes back.
enum class peer_state : std::uint8_t { alive, lost, torn_down };

class peer_liveness {
 public:
  virtual ~peer_liveness() = default;
  // Polled by the scheduler's event loop; never blocks.
  virtual peer_state state(rank_id peer) const = 0;
};

// HiCache L3 storage reads into host pages for a prefetch.
using storage_handle = std::uint64_t;

enum class storage_poll : std::uint8_t { in_flight, completed, failed };

class storage_io {
 public:
  virtual ~storage_io() = default;
  virtual storage_handle read_pages(room_key owner, const std::vector<page_index>& host_pages) = 0;
  virtual storage_poll poll(storage_handle handle) = 0;
  // Blocks until the read is no longer in flight and says how it ended: the transport's own
  // completion (a CUDA event, an I/O future), never a spin on poll. The simulator suspends
  // the calling fiber until the read's actor ends it. There is no cancel for a storage call.
  virtual storage_poll wait(storage_handle handle) = 0;
};

// Asynchronous stores of a rank's device pages into host memory or storage: HiCache's
// write-back, an offload connector's store before a preemption or at a request's end (vLLM's
// OffloadingConnector, the Mooncake store connector). The copy runs on the transport's own
// thread and reads the pages until it ends; the engine's loop hands its completion, by job
// identity, to the core (running_requests::on_store_done).
class store_engine {
 public:
  virtual ~store_engine() = default;
  virtual void submit(store_job_id job, room_key owner, const std::vector<page_index>& pages) = 0;
};

// Control messages between prefill and decode (bootstrap metadata, ABORT, ABORT_ACK, ...).
enum class control_kind : std::uint8_t { metadata, abort, abort_ack, status, chunk_ready };

struct control_message {
  control_kind kind = control_kind::metadata;
  rank_id from = 0;
  room_key key;
  std::optional<abort_token> token;
  std::vector<page_index> pages;
  std::optional<kv_status> status;  // kind status: what the sender's side says of the request
  // The sender's MAC of everything above under the key of its link to the receiver
  // (core/message_proof.h): on a prefill rank's abort_ack, chunk_ready and status.
  std::optional<std::array<std::uint8_t, 32>> proof{};
};

class messenger {
 public:
  virtual ~messenger() = default;
  virtual void send(rank_id to, const control_message& message) = 0;
  // Blocks (suspends) until a message for this rank arrives.
  virtual control_message receive() = 0;
};

}  // namespace kvsim::core
