#include "core/prefetch_abort.h"

#include <utility>

#include "core/invariant.h"

namespace kvsim::core {

prefetch_abort_coordinator::prefetch_abort_coordinator(rank_id rank, prefetch_ports ports,
                                                       variant v)
    : rank_(rank), ports_(ports), variant_(v) {}

void prefetch_abort_coordinator::emit(event_body body) {
  ports_.events.emit_built(event{rank_, std::move(body)});
}

void prefetch_abort_coordinator::register_pending(room_key key, std::vector<page_index> host_pages) {
  owner_.check();
  prefetches_[key] = prefetch{std::move(host_pages), std::nullopt, false};
  emit(prefetch_registered{key});
}

void prefetch_abort_coordinator::erase(room_key key) {
  prefetches_.erase(key);
  emit(prefetch_erased{key});
}

void prefetch_abort_coordinator::start_io(room_key key) {
  owner_.check();
  prefetch& p = prefetches_.at(key);
  if (p.io) return;
  p.pages_allocated = true;
  emit(host_pages_allocated{key, p.host_pages});
  emit(prefetch_lock_taken{key});
  p.io = ports_.storage.read_pages(key, p.host_pages);
}

prefetch_state prefetch_abort_coordinator::local_state(room_key key) const {
  const auto it = prefetches_.find(key);
  if (it == prefetches_.end()) return prefetch_state::missing;
  return it->second.io ? prefetch_state::active : prefetch_state::pending;
}

storage_poll prefetch_abort_coordinator::drain(room_key key, storage_handle io) {
  // No cancel for a storage call in flight: wait for it to return, whatever it returns. The
  // port blocks on the read's own completion; a loop on poll would spin the owner thread.
  const storage_poll outcome = ports_.storage.wait(io);
  KVSIM_INVARIANT(outcome != storage_poll::in_flight, "storage_io::wait returned before the read ended");
  emit(prefetch_drained{key, outcome == storage_poll::completed});
  return outcome;
}

void prefetch_abort_coordinator::free_after_drain(room_key key, const prefetch& p,
                                                  storage_poll outcome) {
  // The completed head is the scheduler's to free; an unfinished read leaves its pages as the
  // tail, which the I/O thread frees once its storage call has returned.
  const host_page_owner owner =
      outcome == storage_poll::completed ? host_page_owner::scheduler : host_page_owner::io_thread;
  emit(host_pages_freed{key, p.host_pages, owner});
}

void prefetch_abort_coordinator::complete(room_key key) {
  owner_.check();
  const auto it = prefetches_.find(key);
  if (it == prefetches_.end()) return;
  const prefetch p = it->second;
  if (p.io) {
    free_after_drain(key, p, drain(key, *p.io));
    emit(prefetch_lock_released{key});
  }
  erase(key);
}

void prefetch_abort_coordinator::release_aborted_request(room_key key) {
  owner_.check();
  const prefetch_state local = local_state(key);
  emit(prefetch_classified{key, local});
  // Historical: a rank with nothing to clean returns before the reduce its peers enter (H3).
  if (variant_.has(bug::h3_skip_reduce) && local == prefetch_state::missing) return;
  const auto group_max = static_cast<prefetch_state>(
      ports_.group.all_reduce(static_cast<std::int64_t>(local), reduce_op::max));
  emit(prefetch_agreed{key, group_max});
  // Historical: missing and pending ranks return early; an active peer waits alone (H1).
  if (variant_.has(bug::h1_early_return) && local != prefetch_state::active) {
    erase(key);
    return;
  }
  if (local == prefetch_state::pending) {
    erase(key);  // revoke before joining: its I/O can never start now
    emit(prefetch_revoked{key});
  }
  if (group_max != prefetch_state::active) return;  // nobody has I/O in flight

  std::optional<prefetch> active;
  if (local == prefetch_state::active) active = prefetches_.at(key);
  // Historical (H2): the active rank takes its prefetch for terminated and frees every host
  // page at once, before the barrier and without draining its storage read, while the I/O
  // thread still owns the unfinished tail. A read still in flight keeps writing into pages
  // the pool may already have handed to the next request; a read already returned harms
  // nothing, so the damage depends on when the abort lands (a race, not a rule).
  if (active && variant_.has(bug::h2_divergent_cleanup)) {
    emit(host_pages_freed{key, active->host_pages, host_page_owner::scheduler});
    ports_.group.barrier();
    emit(prefetch_lock_released{key});
    erase(key);
    return;
  }
  storage_poll outcome = storage_poll::completed;
  if (active) outcome = drain(key, *active->io);
  ports_.group.barrier();
  if (active) {
    emit(prefetch_lock_released{key});
    free_after_drain(key, *active, outcome);
    erase(key);
  }
}

}  // namespace kvsim::core
