#pragma once
// A simulated world: a whole multi-rank cluster in one thread. Actors are Boost.Fiber fibers;
// a custom scheduling algorithm (scheduling_algorithm.h) hands every choice of who runs next
// to this world, which asks the decision stream. Blocking is sim-owned: an actor that waits
// says what it waits on, so a deadlock comes with a wait-for graph. Virtual time advances only
// when nothing can run. After every step the world hands new events to the checkers.
//
// A world runs once. Many worlds may exist in one process (one after another on a thread);
// there is no global state.
#include <array>
#include <boost/fiber/context.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ports.h"
#include "sim/actor_name.h"
#include "sim/checker.h"
#include "sim/decision_stream.h"
#include "sim/fault_profile.h"
#include "sim/fiber_stacks.h"
#include "sim/ready_set.h"
#include "sim/sim_events.h"
#include "sim/step_log.h"
#include "sim/search/strategy.h"
#include "sim/wait_reason.h"

namespace kvsim::sim {

// Thrown inside an actor when the run is over and its fiber must unwind. Actors never catch
// it (the world's actor wrapper does).
struct run_cancelled {};
// Thrown by world::end_current_actor: the actor stops where it is (a rank that died). Actors
// never catch it either.
struct actor_ended {};

struct world_config {
  std::uint64_t step_limit = 20'000;  // more schedule steps than this is a livelock finding
  std::size_t stack_bytes = default_stack_bytes;
  fault_profile faults;
  // Keep the step log (sim/step_log.h): what each step touched, for the model checker.
  bool record_steps = false;
  // Where the actors' fiber stacks come from and go back to: a search passes one pool to
  // every world it builds, so stacks are reused from run to run (fiber_stacks.h). Null: the
  // world has its own. A pool must outlive the worlds it serves and have their stack_bytes.
  fiber_stacks* stack_pool = nullptr;
};

enum class run_end : std::uint8_t {
  quiescent,  // every actor returned and no checker objected
  finding,    // a checker, the deadlock detector, the step limit or a crash ended it
  diverged,   // a strict replay no longer fit its recording
  abandoned,  // the strategy gave the run up (a search that knows the rest is redundant)
};

const char* to_string(run_end end);

struct run_outcome {
  run_end end = run_end::quiescent;
  std::uint64_t steps = 0;
  std::uint64_t time_us = 0;
};

class world {
 public:
  world(strategy& chooser, world_config config);
  ~world();
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  // Before run() or from a running actor (a transfer executor is spawned by its engine).
  // Short of memory for the new actor (its record, its fiber stack), this throws
  // std::bad_alloc and leaves the world as it was; during a run it also stops the run, so
  // that run() throws std::bad_alloc once every fiber has unwound.
  actor_id spawn(actor_name name, std::function<void()> body);
  // An actor whose steps change only `home` and what they declare (sim/step_log.h), not its
  // rank: a device's worker (a transfer executor, a storage I/O actor); with no_home, only
  // what it declares (a poller that declares its rank where it touches it).
  actor_id spawn(actor_name name, std::function<void()> body, std::uint64_t home);
  static constexpr std::uint64_t no_home = 0;
  // An actor of its rank on `strand` (nonzero): actors of one strand run one at a time from
  // one blocking wait to the next, as coroutines of one thread do (Asio's strands: handlers
  // of a strand never run concurrently). A rank's scheduler serving many requests is one
  // thread; each request an actor of its strand, so a request's core call never interleaves
  // with another's, while everything else (network, transfers, other threads) still
  // preempts it at every step.
  actor_id spawn_on_strand(actor_name name, std::function<void()> body, std::uint32_t strand);
  // Fed the events of c.subscriptions() (asked now), after the checkers added before it.
  void add_checker(checker& c);
  // Lines for the wait-for graph of a deadlock (e.g. a collective group's arrivals).
  void add_wait_explainer(std::function<std::vector<std::string>()> explain) {
    wait_explainers_.push_back(std::move(explain));
  }

  // Called once every actor has returned, before the checkers' quiescence checks: a world
  // reads its components' own books here and emits what they say (e.g. ledger_audited).
  void add_quiescence_audit(std::function<void()> audit) { audits_.push_back(std::move(audit)); }
  // A part of the world's state the terminal digest covers beyond the event log (e.g. the
  // bytes of simulated memory): `add` folds values into the digest.
  using digest_fn = std::function<void(const std::function<void(std::uint64_t)>& add)>;
  void add_state_digest(digest_fn part) { digests_.push_back(std::move(part)); }

  run_outcome run();

  // --- for actors and ports, from inside a running actor ----------------------------------
  // A preemption point: the scheduler may now run someone else.
  void step();
  // Suspends the current actor until wake() or, if given, the deadline; true on timeout.
  bool block(const wait_reason& reason, std::optional<std::uint64_t> deadline_us = std::nullopt);
  void wake(actor_id actor);
  // Blocks the current actor for `duration_us` of virtual time (never real time: the clock
  // only jumps when nobody can run).
  void wait_virtual(std::uint64_t duration_us);
  // A fault opportunity: fires with the profile's probability for `kind` under random search,
  // never once the profile's faults have stopped (fault_profile::faults_stop_us).
  bool fault(fault_kind kind);
  // A data choice among `options` (e.g. a message delay), named by `tag`.
  std::uint32_t choose(std::uint64_t tag, std::uint32_t options);
  // Something the network or a device will do by itself once `delay_us` has passed: the
  // scheduler chooses when among the deliverable ones (so deliveries reorder).
  void post(std::uint64_t delay_us, std::function<void()> deliver);
  // A port or scenario reports a finding directly (e.g. mismatched collectives).
  void report(finding f);

  // Ends the calling actor at once, wherever it is, unwinding its frames (a rank whose
  // process died stops mid-call). It finishes as if it had returned.
  [[noreturn]] void end_current_actor();

  void emit(sim_event_body body);
  // Declares that the current step reads or writes a shared object (sim/step_log.h). Free
  // when the world keeps no step log.
  void touch(std::uint64_t object, access mode) const {
    if (config_.record_steps) step_log_.touch(object, mode);
  }
  // A token for a shared object the caller creates (a wait queue, a gate): numbered in
  // creation order, so stable across runs as long as objects are created in setup or by
  // name (object_token with a stable index otherwise).
  std::uint64_t new_object(object_kind kind) { return object_token(kind, next_object_++); }
  actor_id current() const { return current_; }
  std::uint64_t now_us() const { return now_us_; }
  std::uint64_t steps() const { return steps_; }
  const fault_profile& faults() const { return config_.faults; }

  // --- results --------------------------------------------------------------------------
  const std::vector<sim_event>& events() const { return events_; }
  const std::vector<actor_name>& actor_names() const { return names_; }
  const std::vector<decision>& decisions() const { return stream_.decisions(); }
  const std::optional<finding>& found() const { return found_; }
  // The terminal state of a finished run as one 64-bit digest, equal for runs that differ
  // only in the order of independent steps: for a finding, its invariant; otherwise the
  // virtual time, each rank's sequence of core decisions (a rank's steps are totally
  // ordered in every such run), the quiescence audits and the registered parts (memory).
  std::uint64_t terminal_digest() const;
  // What each step touched (empty unless world_config::record_steps).
  const step_log& steps_touched() const { return step_log_; }
  // The stable identity of an actor across runs: its structural name, hashed.
  std::uint64_t thread_of(actor_id id) const { return actors_[id]->thread; }
  const std::optional<divergence>& diverged() const { return stream_.chooser().diverged(); }

  // Sink for the core's events: they enter the log as core_decided.
  core::event_sink& core_sink() { return core_sink_; }
  const core::clock& clock() const { return clock_; }

 private:
  friend class scheduling_algorithm;

  // parked: ready, but another actor of its strand runs (it has not blocked since it began).
  enum class actor_state : std::uint8_t { created, ready, running, blocked, finished, parked };

  struct actor_record {
    actor_name name;
    std::function<void()> body;
    actor_state state = actor_state::created;
    boost::fibers::context* context = nullptr;
    wait_reason waiting_on;
    std::optional<std::uint64_t> wake_at_us;
    bool timed_out = false;
    char* stack_bottom = nullptr;  // lowest address of the actor's fiber stack
    std::size_t stack_bytes = 0;
    std::uint64_t thread = 0;      // stable identity (thread_of)
    std::uint64_t created_at = 0;  // the step that spawned it (0: before the run)
    std::uint64_t home = 0;        // the object every step of it writes (its rank by default)
    std::uint32_t strand = 0;      // 0: none (spawn_on_strand)
  };

  struct pending_delivery {
    std::uint64_t ready_at_us = 0;
    std::function<void()> deliver;
    // Stable identity: who posted it and how many it had posted before; and when.
    std::uint64_t thread = 0;
    std::uint64_t created_at = 0;
  };

  class core_event_bridge final : public core::event_sink {
   public:
    explicit core_event_bridge(world& w) : world_(w) {}
    void emit(const core::event& e) override {
      world_.touch_pages_owned(e);
      world_.emit(core_decided{e});
    }
    void emit_built(core::event&& e) override {
      world_.touch_pages_owned(e);
      world_.emit(core_decided{std::move(e)});
    }

   private:
    world& world_;
  };

  class virtual_clock final : public core::clock {
   public:
    explicit virtual_clock(const world& w) : world_(w) {}
    std::uint64_t now_us() const override { return world_.now_us(); }

   private:
    const world& world_;
  };

  // Called by the scheduling algorithm.
  boost::fibers::context* pick_next();
  // The scheduling decision loop: deliveries, time, checkers, deadlock; returns who runs.
  actor_id decide_next();
  // The options of a step, named (subjects_, and threads_ for the step log): the ready actors
  // in ascending ids, then the due deliveries in ascending ids.
  void list_options();
  // The strategy's choice among `option_count` options (listed, or named after the choice).
  std::uint64_t choose_option(bool listed, std::size_t option_count);
  // Runs the chosen delivery (its subject with delivery_bit) as this step.
  void run_delivery(std::uint64_t chosen);
  // Nothing can run and every actor returned: the audits, the checkers' last word, the end.
  actor_id finish_at_quiescence();
  // decide_next(), short of memory: the run stops as out of memory and control goes back to
  // run(), wherever the decision was taken (in Boost's pick_next, which is noexcept, or on
  // an actor's fiber, whose frames must not see the scheduler's failure).
  actor_id decide_next_or_stop();
  // An allocation failed: the run stops, and run() throws std::bad_alloc at its end.
  void note_out_of_memory() noexcept;
  // Decides who runs next and switches to it, unless it is the current actor again.
  void switch_away();
  void awakened(boost::fibers::context* context);

  void launch(actor_id id);
  void run_actor(actor_id id);
  void suspend_current();
  void throw_if_cancelled() const;
  // Every state change goes through here, so the ready list, the timers and the count of
  // unfinished actors never disagree with the actor records.
  void set_state(actor_id id, actor_state next);
  // Strands: who runs on each (no_actor: nobody), and its members. An actor chosen to run
  // takes its strand and parks the strand's other ready actors; blocking or returning gives
  // the strand back and makes them ready again.
  actor_id spawn_actor(actor_name name, std::function<void()> body, std::uint64_t home,
                       std::uint32_t strand);
  void take_strand(actor_id id);
  void give_strand_back(actor_id id);
  struct strand_record {
    actor_id holder = no_actor;
    std::vector<actor_id> members;
  };
  std::vector<strand_record> strands_;  // by strand id
  void feed_checkers();
  // A core decision that changes who owns pages (an allocation, a free, a lease) writes
  // those pages (sim/step_log.h): whether a copy or an I/O write into a page came before or
  // after its free is what the damage checkers judge, so the two are never independent.
  void touch_pages_owned(const core::event& e) const;
  bool advance_time();
  void stop_with(finding f);
  void stop_with_deadlock();
  void stop_with_livelock();
  // "r1.decode.0 waits on mailbox of rank 1": one actor's state, for the findings above.
  std::string actor_line(actor_id id) const;
  // Evidence of a run that stopped without quiescence, beside the actors' lines: the wait
  // explainers, pending deliveries, the last delivery and core decision, the last events and
  // what the checkers still wait for (unfinished requests).
  std::vector<std::string> stuck_evidence() const;
  static constexpr std::size_t stuck_recent_events = 8;
  actor_id finish_running();
  boost::fibers::context* pick_during_teardown();

  strategy& strategy_;
  world_config config_;
  decision_stream stream_;
  fiber_stacks own_stacks_;  // used when the config names no pool (empty otherwise)
  fiber_stacks& stacks_;     // config_.stack_pool, or own_stacks_
  // Each record on its own: records never move when actors spawn mid-run (an actor holds a
  // reference to its own across a switch). A vector of owners indexes in one load, where the
  // std::deque this was cost a division per lookup, on every step.
  std::vector<std::unique_ptr<actor_record>> actors_;
  std::vector<actor_name> names_;
  std::vector<checker*> checkers_;
  // feed_checkers' dispatch, built per kind at the first event of that kind (a run meets a
  // few dozen of the kinds; indexing all of them per world cost more than a run's decisions
  // of most kinds): the checkers of kind k, in the order they were added, are
  // subscribers_[kind_subscribers_[k].first .. + .count). A range is good for the checkers of
  // its generation: an add_checker starts the next, and every kind is indexed again.
  struct subscriber_range {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    std::uint32_t generation = 0;  // 0: never indexed
  };
  const subscriber_range& subscribers_of(std::size_t kind);
  std::vector<event_kinds> subscriptions_;  // checkers_[i]'s
  std::vector<checker*> subscribers_;
  std::array<subscriber_range, event_kind::count> kind_subscribers_{};
  std::uint32_t subscriber_generation_ = 1;
  std::vector<std::function<std::vector<std::string>()>> wait_explainers_;
  std::map<std::uint64_t, pending_delivery> deliveries_;  // by id: deterministic order
  // The ids of deliveries_ split by time, so that a decision costs what is deliverable now,
  // not every delivery in flight (a world with many ranks has many): due_ ascending (the
  // schedule options' order), the rest in a min-heap by (ready_at_us, id).
  std::vector<std::uint64_t> due_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> not_yet_due_;
  std::uint64_t next_delivery_ = 0;
  std::vector<sim_event> events_;
  static constexpr std::size_t events_reserved = 256;
  static constexpr std::size_t events_per_actor_reserved = 24;  // actors spawned before run()
  static constexpr std::size_t checkers_reserved = 32;
  static constexpr std::size_t subscribers_reserved = 256;  // page42: ~30 kinds met, ~4 checkers each
  std::size_t events_checked_ = 0;
  std::optional<finding> found_;
  std::vector<std::uint64_t> subjects_;  // scratch for schedule options
  std::vector<std::uint64_t> threads_;   // their stable identities, in the same order
  std::vector<std::uint64_t> parked_;    // the parked actors' identities (decision_request)
  std::map<std::uint64_t, std::uint64_t> posts_by_thread_;  // deliveries each thread posted
  // Mutable: declaring an access (touch) is bookkeeping of the search, not world state.
  mutable step_log step_log_;
  bool fence_pending_ = false;
  std::uint64_t next_object_ = 0;  // virtual time advanced since the last step
  ready_set ready_;  // iterated in ascending ids: the schedule options, in order
  // Blocked with a deadline, ascending by (wake_at_us, id): a sorted vector, not a std::set,
  // since every timed block inserts and every wake erases, and a tree node per sleep was a
  // measurable share of a many-rank decision (docs/performance.md); it holds one entry per
  // sleeping actor, so the shifts stay short.
  std::vector<std::pair<std::uint64_t, actor_id>> timers_;
  std::uint32_t unfinished_ = 0;

  boost::fibers::context* main_context_ = nullptr;
  std::vector<boost::fibers::context*> pinned_ready_;  // main and dispatcher contexts
  static constexpr actor_id main_target = no_actor - 1;  // "hand control back to run()"
  static constexpr actor_id no_handoff = no_actor;
  actor_id handoff_ = no_handoff;  // decided by switch_away(), consumed by pick_next()
  actor_id spawning_ = no_actor;
  actor_id current_ = no_actor;
  std::uint64_t now_us_ = 0;
  std::uint64_t steps_ = 0;
  bool running_ = false;
  bool stopping_ = false;
  bool out_of_memory_ = false;  // an actor ran out of memory: run() throws std::bad_alloc
  bool cancelling_ = false;
  bool ran_ = false;

  core_event_bridge core_sink_{*this};
  std::vector<std::function<void()>> audits_;
  std::vector<digest_fn> digests_;
  bool audited_ = false;
  virtual_clock clock_{*this};
};

}  // namespace kvsim::sim
