#include "real_backend/scripts/prefetch_rank.h"

#include <map>
#include <set>

#include "core/prefetch_abort.h"
#include "real_backend/errors.h"
#include "real_backend/host/host_page_ledger.h"
#include "real_backend/host/thread_identity.h"

namespace kvsim::real {
namespace {

using core::room_key;

// The requests' keys, generation by generation of each room, as the simulator numbers them.
std::vector<room_key> keys_of(const scenarios::scenario_spec& spec) {
  std::vector<room_key> keys;
  std::map<core::room_id, core::generation_t> generations;
  for (const scenarios::request_spec& r : spec.requests)
    keys.push_back({r.room, generations[r.room]++});
  return keys;
}

// Host pages of request `r`, as the simulator's prefetch_world lays them out.
std::vector<core::page_index> host_pages(const scenarios::scenario_spec& spec, std::size_t r) {
  std::vector<core::page_index> pages;
  const std::uint32_t pool = spec.topology.pages_per_rank;
  for (std::uint32_t j = 0; j < spec.requests[r].pages; ++j) {
    pages.push_back(static_cast<core::page_index>((r * spec.requests[r].pages + j) % pool));
  }
  return pages;
}

}  // namespace

// The rank's storage as the coordinator sees it. A held read stays in flight until someone
// waits for it: its gate opens at the first poll (the drain of the fixed protocol), so a
// rank that frees host pages without draining (H2) frees them while the read certainly has
// not landed, and the test is deterministic.
class prefetch_rank::opened_by_poll final : public core::storage_io {
 public:
  explicit opened_by_poll(gated_storage& storage) : storage_(storage) {}
  void hold(room_key owner, hold_gate& gate) {
    storage_.hold(owner, gate);
    gates_[owner] = &gate;
  }
  core::storage_handle read_pages(room_key owner,
                                  const std::vector<core::page_index>& host_pages) override {
    const core::storage_handle handle = storage_.read_pages(owner, host_pages);
    owners_[handle] = owner;
    return handle;
  }
  core::storage_poll poll(core::storage_handle handle) override {
    open_gate_of(handle);
    return storage_.poll(handle);
  }
  core::storage_poll wait(core::storage_handle handle) override {
    open_gate_of(handle);
    return storage_.wait(handle);
  }
  // True while a held read of `owner` has not been released (no page of it has landed).
  bool held(room_key owner) const {
    const auto gate = gates_.find(owner);
    return gate != gates_.end() && !gate->second->is_open();
  }

 private:
  gated_storage& storage_;
  std::map<room_key, hold_gate*> gates_;
  std::map<core::storage_handle, room_key> owners_;

  // A held read is released by the first one to wait for it (the drain).
  void open_gate_of(core::storage_handle handle) {
    if (const auto owner = owners_.find(handle); owner != owners_.end()) {
      if (const auto gate = gates_.find(owner->second); gate != gates_.end()) gate->second->open();
    }
  }
};

struct prefetch_rank::parts {
  explicit parts(core::rank_id rank) : ledger(rank) {}
  std::vector<room_key> keys;
  std::vector<std::unique_ptr<hold_gate>> gates;  // per request
  std::unique_ptr<host_page_memory> host;
  std::unique_ptr<gated_storage> storage;
  std::unique_ptr<opened_by_poll> polled;
  host_page_ledger ledger;
};

prefetch_rank::prefetch_rank(const scenarios::scenario_spec& spec, core::rank_id rank,
                             data_plane& plane, finding_log& findings)
    : spec_(spec), rank_(rank), findings_(findings), parts_(std::make_unique<parts>(rank)) {
  parts_->keys = keys_of(spec);
  parts_->host =
      plane.make_host_pages(rank, spec.topology.pages_per_rank, spec.topology.page_bytes);
  parts_->storage = plane.make_storage(rank, rank, *parts_->host);
  parts_->polled = std::make_unique<opened_by_poll>(*parts_->storage);
  for (std::size_t r = 0; r < parts_->keys.size(); ++r) parts_->gates.push_back(plane.make_gate());
}

// No storage worker may wait at a gate past the rank's end.
prefetch_rank::~prefetch_rank() {
  for (auto& g : parts_->gates) g->open();
}

std::uint32_t prefetch_rank::host_page_frees() const { return parts_->ledger.frees(); }

void prefetch_rank::run(core::variant v, core::collective& group, core::event_sink& sink) {
  const core::prefetch_state state = spec_.faults.prefetch_states.at(rank_);
  try {
    core::prefetch_abort_coordinator coordinator(
        rank_, core::prefetch_ports{group, *parts_->polled, sink}, v);
    coordinator.bind_owner(host_threads());
    for (std::size_t r = 0; r < parts_->keys.size(); ++r) {
      const room_key key = parts_->keys[r];
      const bool aborted = spec_.requests[r].abort.has_value();
      if (state != core::prefetch_state::missing)
        coordinator.register_pending(key, host_pages(spec_, r));
      if (state == core::prefetch_state::active) {
        // An aborted request's read stays in flight until the abort drains it.
        if (aborted) parts_->polled->hold(key, *parts_->gates[r]);
        coordinator.start_io(key);
      }
      if (aborted) {
        coordinator.release_aborted_request(key);
      } else {
        coordinator.complete(key);
      }
    }
  } catch (const collective_divergence& d) {
    findings_.add(d.what());
  }
}

// A free while the rank's storage read of those pages is still held (in flight) is H2's
// hazard, seen before the read lands in the freed pages.
void prefetch_rank::observe(const core::event& e) {
  if (e.rank != rank_) return;
  if (const auto* allocated = std::get_if<core::host_pages_allocated>(&e.body)) {
    for (const std::string& line : parts_->ledger.allocated(*allocated)) findings_.add(line);
  } else if (const auto* freed = std::get_if<core::host_pages_freed>(&e.body)) {
    for (const std::string& line : parts_->ledger.freed(*freed)) findings_.add(line);
    if (parts_->polled->held(freed->key)) {
      findings_.add(std::string("I6: the ") + core::to_string(freed->by) + " freed host pages " +
                    core::pages_text(freed->pages) + " of " + core::to_string(freed->key) +
                    " on rank " + std::to_string(e.rank) +
                    " while its storage read was still in flight: the read lands in freed "
                    "pages");
    }
  }
}

// Every active rank's host pages hold what its storage read brought (the last read into
// each page, if requests share pages).
void prefetch_rank::settle_and_check() {
  for (auto& g : parts_->gates) g->open();
  parts_->storage->wait_idle();
  if (spec_.faults.prefetch_states.at(rank_) != core::prefetch_state::active) return;
  const host_page_memory& host = *parts_->host;
  const std::vector<room_key>& keys = parts_->keys;
  std::set<core::page_index> checked;
  for (std::size_t r = keys.size(); r-- > 0;) {
    const std::vector<core::page_index> pages = host_pages(spec_, r);
    for (std::uint32_t j = 0; j < pages.size(); ++j) {
      if (!checked.insert(pages[j]).second) continue;
      const canary_identity want{keys[r].room, keys[r].generation, j};
      if (matches_canary_host(host.page(pages[j]), host.page_bytes(), want)) continue;
      const auto found = owner_of_bytes_host(host.page(pages[j]), host.page_bytes());
      findings_.add(
          "I7: host page " + std::to_string(pages[j]) + " on rank " + std::to_string(rank_) +
          " does not hold what the storage read of " + core::to_string(keys[r]) +
          " brought (logical page " + std::to_string(j) + ") but " +
          (found ? "the bytes of " + core::to_string(core::room_key{found->room, found->generation})
                 : std::string("unrecognisable bytes")));
    }
  }
}

}  // namespace kvsim::real
