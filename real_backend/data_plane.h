#pragma once
// The data plane a real scenario runs on, as interfaces: one rank's KV pages holding canary
// bytes, gates that hold a copy in flight, a transfer engine whose copies can be held, storage
// reads into host pages, and the device side of a rank group's collectives. cuda_data_plane
// implements them with CUDA and NCCL (`kvsim real`, `--data-plane cuda`); host_data_plane in
// host memory shared between processes, with copies on worker threads (`--data-plane host`,
// no GPU needed).
//
// Every object here is called by one host thread at a time: the thread that uses it, after
// the one that built it has handed it over (the transfer scripts build the engine and the
// pages, then only the prefill rank's thread drives the engine), or one after another under
// a lock (shared_pages.h). hold_gate::open/reached are the exception: any thread may call
// them (a gate is opened by the script or a rank while another rank's thread waits).
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/ports.h"
#include "real_backend/canary.h"

namespace kvsim::real {

// What a reader found in a page.
struct page_check {
  bool intact = false;                   // every byte is the reader's canary
  std::optional<canary_identity> found;  // whose canary the page holds, if entirely one writer's
};

// One rank's KV pages.
class page_memory {
 public:
  virtual ~page_memory() = default;
  virtual std::uint32_t pages() const = 0;
  virtual std::uint32_t page_bytes() const = 0;
  // Fills `page` with the canary of (writer, logical_page); done when this returns.
  virtual void write_canary(core::page_index page, core::room_key writer,
                            std::uint32_t logical_page) = 0;
  // Reads `page` as (reader, logical_page) would, now.
  virtual page_check verify(core::page_index page, core::room_key reader,
                            std::uint32_t logical_page) = 0;
};

// Holds work "in flight" until it is opened: the scripted barrier of a scenario on hardware.
class hold_gate {
 public:
  virtual ~hold_gate() = default;
  // Held work has arrived at the gate: everything queued before it on that stream has landed.
  virtual bool reached() const = 0;
  virtual void open() = 0;  // idempotent: the held work resumes
  virtual bool is_open() const = 0;
};

struct ended_transfer {
  core::transfer_handle handle = 0;
  core::transfer_request request;
  core::transfer_poll outcome = core::transfer_poll::succeeded;
  // Pages before this index were already known to have landed (a gate after them was
  // reached); the later ones landed at some moment before the end was observed.
  std::uint32_t first_unconfirmed_page = 0;
};

struct held_transfer {
  core::transfer_handle handle = 0;
  core::transfer_request request;
  std::uint32_t before_page = 0;  // pages [0, before_page) land before the gate
};

class gated_transfer_engine : public core::transfer_engine {
 public:
  // Holds every later transfer of `owner` at `gate` before it copies the page with index
  // `before_page` of that transfer (the simulator's sim_transfer_engine::hold).
  virtual void hold(core::room_key owner, hold_gate& gate, std::uint32_t before_page) = 0;
  // The transfers queued behind `gate`.
  virtual std::vector<held_transfer> held_at(const hold_gate& gate) const = 0;
  // Transfers whose end poll() saw since the last call, in the order seen.
  virtual std::vector<ended_transfer> take_ended() = 0;
};

// One rank's host pages (HiCache's host memory): what storage reads write into.
class host_page_memory {
 public:
  virtual ~host_page_memory() = default;
  virtual std::uint32_t pages() const = 0;
  virtual std::uint32_t page_bytes() const = 0;
  virtual const std::uint8_t* page(core::page_index page) const = 0;
};

// HiCache L3 storage reads into host pages: read_pages writes the canary of (owner, j) into
// the j-th host page, as if the storage held that request's KV.
class gated_storage : public core::storage_io {
 public:
  // Holds the later reads of `owner` at `gate` before any of their pages lands.
  virtual void hold(core::room_key owner, hold_gate& gate) = 0;
  // Returns once every read has landed (the caller has opened every gate that holds one).
  virtual void wait_idle() = 0;
};

// How long a blocked collective may wait, and what may prove that it never can end.
struct wait_policy {
  std::chrono::steady_clock::time_point deadline;
  // A finding line ("I5: ...") once the wait can never end (a peer returned); empty otherwise.
  std::function<std::optional<std::string>()> give_up;
};

// The device side of one rank group's collectives.
class group_plane {
 public:
  virtual ~group_plane() = default;
  // True when every member has a device of its own and the reduction runs across them (one
  // NCCL rank each). False when the members share a device: the host combines their values
  // (the peers are simulated by host threads) and the agreed value then passes through the
  // device communicator (one NCCL rank), so the device path still runs.
  virtual bool across_devices() const = 0;
  // across_devices(): member `member` contributes and blocks for the group's result. Throws
  // collective_divergence when `policy` gives up (after aborting the communicator).
  virtual std::int64_t reduce(std::uint32_t member, std::int64_t value, core::reduce_op op,
                              const wait_policy& policy) = 0;
  // !across_devices(): the host-agreed value through the device plane.
  virtual std::int64_t pass_through(std::int64_t value, core::reduce_op op,
                                    const wait_policy& policy) = 0;
};

// Makes the pieces; a slot is a rank's position in its scenario, mapped onto the devices.
class data_plane {
 public:
  virtual ~data_plane() = default;
  virtual std::string name() const = 0;                         // "cuda", "host"
  virtual std::uint32_t devices() const = 0;                    // devices in use
  virtual std::string device_of(std::uint32_t slot) const = 0;  // "device 0 (NVIDIA H200)"
  virtual std::unique_ptr<page_memory> make_pages(std::uint32_t slot, std::uint32_t pages,
                                                  std::uint32_t page_bytes) = 0;
  virtual std::unique_ptr<hold_gate> make_gate() = 0;
  virtual std::unique_ptr<gated_transfer_engine> make_transfer_engine(
      core::rank_id rank, page_memory& source,
      const std::map<core::rank_id, page_memory*>& destinations) = 0;
  virtual std::unique_ptr<host_page_memory> make_host_pages(std::uint32_t slot, std::uint32_t pages,
                                                            std::uint32_t page_bytes) = 0;
  virtual std::unique_ptr<gated_storage> make_storage(std::uint32_t slot, core::rank_id rank,
                                                      host_page_memory& host) = 0;
  virtual std::unique_ptr<group_plane> make_group_plane(std::uint32_t members) = 0;
  // `bytes` of zeroed memory named `tag` that every process of the run maps (the same tag
  // gives the same memory), for what the scripts share between ranks in separate processes
  // (script_board.h). Empty where the plane has none (cuda: its ranks share one process).
  virtual std::span<std::byte> shared_words(const std::string& tag, std::size_t bytes) {
    (void)tag;
    (void)bytes;
    return {};
  }
};

}  // namespace kvsim::real
