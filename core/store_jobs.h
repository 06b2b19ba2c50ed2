#pragma once
// The store jobs of one rank: asynchronous copies of device pages into host memory or
// storage (HiCache write-back; vLLM's OffloadingConnector and the Mooncake store connector,
// which store a request's blocks at its end or before a preemption). A job reads its pages on
// the transport's thread for as long as it runs, so it holds its own ledger lease on them from
// the moment it is started: a release of those pages while it runs (the request finished, was
// preempted or aborted) is deferred by the ledger until the job's completion ends the lease.
// The completion is counted by the job's identity, never by the request it stored: a request
// that was preempted and resumed is a new incarnation, and a completion of the old one's job
// must never count for the new one's (vLLM's Mooncake store connector counted jobs per request
// id, and a preempted lifecycle's late completions ended a newer lifecycle's count).
//
// Bounded: at most `jobs_in_flight_max` jobs run at once (start is refused beyond, and the
// caller goes on without the store); the identities of the last `completions_remembered`
// counted jobs are kept, so that a duplicate completion is told from one never issued.
//
// Misuse and stale news are refused with an event and change nothing.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/events.h"
#include "core/page_ledger.h"
#include "core/ports.h"
#include "core/variant.h"

namespace kvsim::core {

struct store_limits {
  std::uint32_t jobs_in_flight_max = 64;
  std::uint32_t completions_remembered = 256;
};

class store_jobs {
 public:
  store_jobs(rank_id rank, page_ledger& ledger, store_engine* engine, event_sink& events,
             variant v, store_limits limits = {});

  // Starts a job reading `pages` of `owner` (every page `owner`'s, none retiring), leased for
  // as long as it runs. Empty when the table is full, there is no store engine, or the ledger
  // refuses the lease (the ledger says why).
  std::optional<store_job_id> start(room_key owner, std::span<const page_index> pages);
  // The transport ended `job`, which it ran for `owner`: its lease ends, once.
  void on_done(store_job_id job, room_key owner, bool stored);
  // Historical B14 only: the preemption path resets the tracker, ending the leases of every
  // job of `owner` while their copies may still read.
  void abandon_jobs_of(room_key owner);

  bool can_store() const { return engine_ != nullptr; }
  bool storing(room_key owner) const { return by_owner_.contains(owner); }
  std::uint32_t in_flight() const { return static_cast<std::uint32_t>(jobs_.size()); }
  std::uint32_t remembered() const { return static_cast<std::uint32_t>(remembered_.size()); }
  // What a quiescent rank still holds: one line per job in flight.
  std::vector<std::string> held() const;
  // The table's books against each other; empty when consistent.
  std::vector<std::string> check_consistency() const;

 private:
  struct job_record {
    room_key owner;
    std::vector<page_index> pages;
    std::optional<lease_id> lease;
  };

  // The job whose lease a completion of `job` (for `owner`) ends: the job itself, or, in the
  // historical B13, the newest job in flight of the same room (any incarnation).
  std::optional<store_job_id> counted_against(store_job_id job, room_key owner) const;
  void finish(store_job_id job);
  void remember(store_job_id job);
  void emit(event_body body);

  rank_id rank_;
  page_ledger& ledger_;
  store_engine* engine_;
  event_sink& events_;
  variant variant_;
  store_limits limits_;
  std::map<store_job_id, job_record> jobs_;  // in flight, by id: deterministic iteration
  std::map<room_key, std::set<store_job_id>> by_owner_;
  std::set<store_job_id> remembered_;
  // Oldest first, the eviction order (a map, not a deque: nothing is allocated on a rank that
  // never stores).
  std::map<std::uint64_t, store_job_id> remembered_order_;
  std::uint64_t next_remembered_ = 0;
  store_job_id next_job_ = 1;                  // never reused
};

}  // namespace kvsim::core
