#pragma once
// The requests a decode rank runs once their KV arrived: the engine's running batch. A
// request runs on its pages until it finishes or the engine preempts it to make room (vLLM's
// scheduler preempts a running request when the pool cannot serve the batch; SGLang retracts
// decode requests). Either way its pages go back to the ledger through here, and a store job
// still reading them (the offload before a preemption, the write-back at a request's end)
// keeps them: the ledger defers their free until the job's completion ends its lease, exactly
// as it defers a free while a transfer writes. A preempted request that resumes is a new
// incarnation: the next generation of its room (the caller picks it), with new pages, so that
// every completion the core counts names one incarnation, never "the request".
//
// Misuse (a key that does not run here, pages it does not own) is refused with an event and
// changes nothing. Threading: one owner (core/owner_thread.h), the rank's scheduler.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/events.h"
#include "core/owner_thread.h"
#include "core/page_ledger.h"
#include "core/ports.h"
#include "core/store_jobs.h"
#include "core/variant.h"

namespace kvsim::core {

class running_requests {
 public:
  running_requests(rank_id rank, page_ledger& ledger, store_engine* store, event_sink& events,
                   variant v, store_limits limits = {});

  // `key` runs on `pages`, which it owns (decode_receiver::hand_over gave them).
  bool adopt(room_key key, std::vector<page_index> pages);
  // A preempted request resumes as `key` (a new incarnation) on `pages` fresh pages; empty
  // when the pool cannot serve them now (the caller waits its turn and retries).
  std::optional<std::vector<page_index>> resume(room_key key, std::uint32_t pages);
  // Stores the running request's pages (best effort: empty when the table is full).
  std::optional<store_job_id> store(room_key key);
  // The transport ended a store job; counted by the job's identity.
  void on_store_done(store_job_id job, room_key owner, bool stored);
  // The engine takes the request's pages back; a store job reading them keeps them until it
  // ends. The key runs no more (a resume is a new key).
  void preempt(room_key key);
  // The request is done; its pages go back the same way.
  void finish(room_key key);

  bool running(room_key key) const { return running_.contains(key); }
  bool storing(room_key key) const { return jobs_.storing(key); }
  std::uint32_t stores_in_flight() const { return jobs_.in_flight(); }
  std::size_t running_count() const { return running_.size(); }
  // Pages of a running request.
  const std::vector<page_index>& pages(room_key key) const { return running_.at(key); }
  const store_jobs& jobs() const { return jobs_; }
  void bind_owner(const thread_identity& identity) { owner_.bind(identity); }
  // What a quiescent rank still holds (running requests, stores in flight), one line each.
  std::vector<std::string> held() const;
  std::vector<std::string> check_consistency() const;

 private:
  void end(room_key key, running_end how, request_outcome outcome);
  void emit(event_body body);

  rank_id rank_;
  page_ledger& ledger_;
  event_sink& events_;
  variant variant_;
  store_jobs jobs_;
  std::map<room_key, std::vector<page_index>> running_;
  single_owner owner_;
};

}  // namespace kvsim::core
