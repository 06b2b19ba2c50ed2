#include "scenarios/transfer_world.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "core/decode_rank.h"
#include "core/prefill_rank.h"
#include "scenarios/careless_caller.h"
#include "scenarios/core_audit.h"
#include "scenarios/decode_run.h"
#include "scenarios/late_status.h"
#include "scenarios/pinned_pages.h"
#include "scenarios/rank_batch.h"
#include "scenarios/transfer_admission.h"
#include "scenarios/world_keys.h"
#include "sim/kv_memory.h"
#include "sim/sim_assert.h"
#include "sim/sim_liveness.h"
#include "sim/sim_network.h"
#include "sim/sim_store_engine.h"
#include "sim/sim_transfer_engine.h"
#include "sim/wait_queue.h"

namespace kvsim::scenarios {
namespace {

using core::page_index;
using core::rank_id;
using core::room_key;

constexpr std::uint64_t poll_interval_us = transfer_poll_interval_us;
// Prefill computes a request's chunks one after another: this much virtual time between two
// chunks, so that an abort can land between them (a chunk queued, the next not yet).
constexpr std::uint64_t chunk_compute_us = 5;
// Tags of the world's own data decisions (sim::world::choose).
constexpr std::uint64_t choice_free_source_now = 0xf5ee;
constexpr std::uint64_t choice_late_status_room = 0x1a7e;
constexpr std::uint64_t choice_late_status_value = 0x1a7f;
// Peer death: a heartbeat period (each one a chance for the rank to die), and how long the
// transport takes to confirm a dead rank's connections torn down once its NIC went quiet.
constexpr std::uint64_t heartbeat_us = 5;
constexpr std::uint64_t teardown_us = 20;

}  // namespace

struct transfer_world::parts {
  struct prefill_rank_parts {
    prefill_rank_parts(parts& p, rank_id rank)
        : memory(p.world, rank, p.spec.topology.pages_of(rank), p.spec.topology.page_bytes),
          engine(p.world, rank, {}),
          core(rank, {engine, p.network.endpoint(rank), p.world.core_sink()},
               world_keyring(p.spec.topology.link_keys, rank, p.peers_of_prefill()),
               core::prefill_rank_options{.pages_total = p.spec.topology.pages_of(rank),
                                          .order = p.spec.topology.allocation,
                                          .tombstones_max = p.spec.topology.tombstones,
                                          .v = p.variant}),
          news(p.world, "prefill bootstrap news") {}
    sim::kv_memory memory;
    sim::sim_transfer_engine engine;
    core::prefill_rank core;
    core::page_ledger& ledger = core.ledger();
    core::room_lifetimes& lifetimes = core.lifetimes();
    core::transfer_status_table& statuses = core.statuses();
    core::prefill_sender& sender = core.sender();
    core::abort_token_verifier& verifier = core.verifier();
    std::map<room_key, std::map<rank_id, std::vector<page_index>>> metadata;
    std::set<room_key> aborts_seen;
    std::map<room_key, std::size_t> chunks_queued;  // to every decode rank
    std::map<room_key, std::optional<core::kv_status>> statuses_read;  // the last read_status
    std::set<room_key> status_seen;  // rooms the scheduler ever read a status for
    sim::wait_queue news;
    bool scheduler_done = false;
  };
  struct decode_rank_parts {
    decode_rank_parts(parts& p, rank_id rank)
        : memory(p.world, rank, p.spec.topology.pages_of(rank), p.spec.topology.page_bytes),
          store(p.world, rank, memory),
          core(rank,
               {p.network.endpoint(rank), p.world.clock(), p.world.core_sink(), p.liveness, &store},
               world_keyring(p.spec.topology.link_keys, rank, p.peers_of_decode()),
               core::decode_rank_options{
                   .pages_total = p.spec.topology.pages_of(rank),
                   .order = p.spec.topology.allocation,
                   .token_epoch = rank_life(rank),
                   .store = {p.spec.engine.store_jobs_max, p.spec.engine.store_completions_remembered},
                   .v = p.variant}) {}
    sim::kv_memory memory;
    sim::sim_store_engine store;
    core::decode_rank core;
    std::unique_ptr<decode_run> run;  // the engine's running batch; null unless the scenario runs requests
    core::page_ledger& ledger = core.ledger();
    core::abort_token_verifier& verifier = core.verifier();
    core::decode_receiver& receiver = core.receiver();
    std::vector<std::size_t> gates_to_open;
    std::set<room_key> registered;                 // requests this rank has preallocated
    std::string pinned_wait;  // what the scheduler waits on for a pinned page (the wait's label)
    bool done = false;
  };

  parts(const scenario_spec& s, core::variant v, sim::strategy& chooser,
        const sim::fault_profile& faults, sim::fiber_stacks* stack_pool)
      : spec(s),
        variant(v),
        world(chooser, sim::world_config{.step_limit = s.step_limit,
                                         .faults = faults,
                                         .stack_pool = stack_pool}),
        liveness(world),
        network(world) {
    network.set_liveness(liveness);
    std::map<core::room_id, core::generation_t> generations;
    for (const request_spec& r : spec.requests) {
      keys.push_back({r.room, generations[r.room]});
      generations[r.room] += spec.engine.generation_stride();  // a resumed incarnation's keys
    }
    const rank_id prefills = spec.topology.prefill_ranks;
    for (rank_id p = 0; p < prefills; ++p) prefill_ranks.push_back(p);
    for (rank_id d = 0; d < spec.topology.decode_ranks; ++d) decode_ranks.push_back(prefills + d);
    // The insider (fault message_forge): a member of the cluster with the next free rank id,
    // holding the keys of its links to every rank, party to no request (sim_network.h).
    insider = prefills + spec.topology.decode_ranks;
    // Under per_pair keying each connection is sealed on its own: nothing recorded before a
    // restart arrives after it, so the insider holds no recording of an earlier life.
    const link_keying keying = spec.topology.link_keys;
    if (spec.faults.on(fault_kind::message_forge)) {
      network.set_insider(
          *insider, [keying](rank_id a, rank_id b) -> const core::link_macs& { return world_link(keying, a, b); },
          keying == link_keying::per_life ? sim::sim_network::link_lookup(world_link_before_restart)
                                          : sim::sim_network::link_lookup());
    }
    for (rank_id p : prefill_ranks) prefill.emplace(p, std::make_unique<prefill_rank_parts>(*this, p));
    for (rank_id d : decode_ranks) decode.emplace(d, std::make_unique<decode_rank_parts>(*this, d));
    std::map<rank_id, sim::kv_memory*> memories;
    for (auto& [rank, part] : prefill) memories[rank] = &part->memory;
    for (auto& [rank, part] : decode) memories[rank] = &part->memory;
    for (auto& [rank, part] : prefill) part->engine.set_memories(memories);
    for (const auto& [rank, part] : memories) {
      // A pinned request's pages are named (pages_allocated.exact): the ledger audit checks
      // the order of every other allocation of the rank against its free list.
      world.emit(sim::ledger_created{rank, spec.topology.pages_of(rank), spec.topology.allocation});
    }
    for (rank_id p : prefill_ranks) world.emit(sim::lifetimes_created{p, spec.topology.tombstones});
    // Ranks that serve many requests at once run each live request as an actor of the rank.
    if (batching()) {
      for (const auto& [rank, part] : memories) {
        batches.emplace(rank, std::make_unique<rank_batch>(world, rank, spec.topology.concurrency));
      }
    }
    if (spec.engine.runs_requests()) {
      for (auto& [rank, part] : decode) part->run = make_run(rank, *part);
    }
    for (std::size_t g = 0; g < spec.faults.gates.size(); ++g) {
      gates.push_back(std::make_unique<sim::gate>(world, "gate" + std::to_string(g)));
      const auto& gate_spec = spec.faults.gates[g];
      for (auto& [rank, part] : prefill) {
        part->engine.hold(keys[gate_spec.request], *gates.back(), gate_spec.before_page);
      }
    }
    spawn_actors();
    world.add_quiescence_audit([this] {
      for (const auto& [rank, part] : prefill) {
        world.emit(audit_ledger(rank, part->ledger, keys));
        for (sim::core_audited& audit :
             audit_prefill(rank, part->sender, part->lifetimes, part->statuses, part->verifier, keys)) {
          world.emit(std::move(audit));
        }
        for (const room_key& key : keys) read_status(rank, key);
      }
      for (const auto& [rank, part] : decode) {
        world.emit(audit_ledger(rank, part->ledger, keys));
        const std::vector<room_key> registered(part->registered.begin(), part->registered.end());
        world.emit(audit_decode(rank, part->receiver, part->verifier, registered));
        if (part->run) world.emit(sim::core_audited{rank, "running_requests", part->core.running().held()});
      }
    });
  }

  std::unique_ptr<decode_run> make_run(rank_id d, decode_rank_parts& me) {
    rank_batch* batch = batching() ? batches.at(d).get() : nullptr;
    return std::make_unique<decode_run>(decode_run::rank_view{
        world, spec.engine, me.core.running(), me.memory, me.store, batch, [this, d] { decode_idle(d); }});
  }

  void spawn_actors() {
    // The schedulers live in their rank (every step may touch its books); the pollers
    // (bootstrap, heartbeat, late status writer, careless caller) spend most steps finding
    // nothing to do, so they declare their rank only where they touch it (sim/step_log.h)
    // and their idle polls stay independent of the scheduler's steps.
    constexpr std::uint64_t poller = sim::world::no_home;
    for (rank_id p : prefill_ranks) {
      world.spawn({p, "prefill", 0}, [this, p] { prefill_scheduler(p); });
      world.spawn({p, "bootstrap", 0}, [this, p] { prefill_bootstrap(p); }, poller);
      if (spec.faults.on(fault_kind::peer_death)) world.spawn({p, "heartbeat", 0}, [this, p] { heartbeat(p); }, poller);
    }
    for (rank_id d : decode_ranks) world.spawn({d, "decode", 0}, [this, d] { decode_scheduler(d); });
    if (spec.faults.on(fault_kind::late_status)) {
      for (rank_id p : prefill_ranks) world.spawn({p, "worker", 0}, [this, p] { late_writer(p); }, poller);
    }
    if (spec.faults.on(fault_kind::ledger_misuse)) {
      for (rank_id p : prefill_ranks) {
        world.spawn({p, "careless", 0}, [this, p] { careless_loop(p, prefill.at(p)->ledger); }, poller);
      }
      for (rank_id d : decode_ranks) {
        world.spawn({d, "careless", 0}, [this, d] { careless_loop(d, decode.at(d)->ledger); }, poller);
      }
    }
  }

  // The ranks each side holds link keys for: the other side, and the cluster's insider.
  std::vector<rank_id> peers_of_prefill() const {
    std::vector<rank_id> peers = decode_ranks;
    if (insider) peers.push_back(*insider);
    return peers;
  }
  std::vector<rank_id> peers_of_decode() const {
    std::vector<rank_id> peers = prefill_ranks;
    if (insider) peers.push_back(*insider);
    return peers;
  }

  // A poller touches its rank's books (sim/step_log.h: its steps declare them).
  void touch_rank(rank_id rank) const {
    world.touch(sim::object_token(sim::object_kind::rank, rank), sim::access::write);
  }

  // --- peer death ----------------------------------------------------------------------
  // A dead rank's actor ends where it stands (the world unwinds it).
  void stop_if_dead(rank_id p) {
    if (!liveness.alive(p)) world.end_current_actor();
  }
  // The prefill rank's waits: a dead rank stops at the first of them (it may have run on
  // since the death until here, as a process runs until the signal lands; whatever it sends
  // meanwhile is lost), and one that dies while waiting does not wake up.
  void prefill_wait_us(rank_id p, std::uint64_t duration_us) {
    stop_if_dead(p);
    world.wait_virtual(duration_us);
    stop_if_dead(p);
  }
  void prefill_wait_news(rank_id p) {
    stop_if_dead(p);
    prefill.at(p)->news.wait();
    stop_if_dead(p);
  }

  // The fault peer_death: at each heartbeat period the search may stop prefill rank p for
  // good; any number of prefill ranks may die, each at its own heartbeat, so a request can
  // lose a second rank while it already drains or holds pages for the first. Its scheduler
  // and bootstrap end at their next wait, messages to and from it are lost, and the writes
  // its NIC has posted keep landing until it stops them (the engine's per-page choice); once
  // none runs, the transport confirms the teardown.
  void heartbeat(rank_id p) {
    prefill_rank_parts& me = *prefill.at(p);
    for (;;) {
      if (all_decode_done()) return;
      world.wait_virtual(heartbeat_us);
      if (world.fault(sim::fault_kind::peer_death)) break;
    }
    liveness.stop(p);
    me.engine.stop();
    me.news.notify_all();
    // A gate is the scenario's hold on a transfer, not the NIC's: it holds no dead rank.
    for (auto& g : gates) g->open();
    while (!me.engine.quiet()) world.wait_virtual(poll_interval_us);
    world.wait_virtual(teardown_us);
    liveness.confirm_torn_down(p);
  }

  // --- the careless caller --------------------------------------------------------------
  // Code outside the core that shares the rank's core objects and calls them wrongly (fault
  // `misuse`, careless_caller.h), at any poll the search chooses while the rank serves.
  void careless_loop(rank_id rank, core::page_ledger& ledger) {
    const bool is_prefill = prefill.contains(rank);
    for (;;) {
      if (scheduling_done()) return;
      if (is_prefill) {
        prefill_wait_us(rank, poll_interval_us);
      } else {
        world.wait_virtual(poll_interval_us);
      }
      if (!world.fault(sim::fault_kind::ledger_misuse)) continue;
      touch_rank(rank);
      careless.call_once(rank, targets_of(rank, ledger));
    }
  }

  careless_caller::rank_targets targets_of(rank_id rank, core::page_ledger& ledger) {
    careless_caller::rank_targets targets{ledger, nullptr, nullptr, nullptr};
    if (const auto p = prefill.find(rank); p != prefill.end()) {
      targets.table = &p->second->lifetimes;
      targets.sender = &p->second->sender;
    } else {
      targets.receiver = &decode.at(rank)->receiver;
    }
    return targets;
  }

  // Every scheduler returned (a dead prefill rank's never will: it counts as done).
  bool scheduling_done() const {
    return all_decode_done() &&
           std::all_of(prefill.begin(), prefill.end(), [this](const auto& entry) {
             return prefill_done(entry.first) || !liveness.alive(entry.first);
           });
  }

  // The schedulers' "done" flags are read across ranks: shared objects of their own
  // (sim/step_log.h), so the search orders a read against the write it may see.
  static std::uint64_t done_flag(rank_id rank) {
    return sim::object_token(sim::object_kind::flag, rank);
  }
  bool prefill_done(rank_id p) const {
    world.touch(done_flag(p), sim::access::read);
    return prefill.at(p)->scheduler_done;
  }
  bool decode_done(rank_id d) const {
    world.touch(done_flag(d), sim::access::read);
    return decode.at(d)->done;
  }

  // --- late status writes ---------------------------------------------------------------
  // SGLang's transfer worker and bootstrap threads write a room's status next to the
  // scheduler, so a write can land late (fault `late_status`): a worker's chunk job that was
  // queued before the abort reports after the room Failed; the bootstrap thread's
  // "waiting for input" lands after the first chunk moved the room to Transferring; a failed
  // job reports after the scheduler erased the room's status. Only writes a worker could
  // still make late are drawn, never progress the room has not made: the table must keep
  // Failed sticky, refuse to go back, and not bring an erased room back.
  void late_writer(rank_id p) {
    prefill_rank_parts& me = *prefill.at(p);
    for (;;) {
      if (scheduling_done()) return;
      prefill_wait_us(p, poll_interval_us);
      if (!world.fault(sim::fault_kind::late_status)) continue;
      touch_rank(p);
      const room_key key =
          keys[world.choose(choice_late_status_room, static_cast<std::uint32_t>(keys.size()))];
      const std::vector<core::kv_status> late = late_statuses(me.statuses.get(key), me.status_seen.contains(key));
      if (late.empty()) continue;
      const auto pick = world.choose(choice_late_status_value, static_cast<std::uint32_t>(late.size()));
      const core::status_update answer = me.statuses.update(key, late[pick]);
      world.emit(sim::status_written{p, key, late[pick], answer == core::status_update::applied});
    }
  }

  // --- prefill -------------------------------------------------------------------------
  void prefill_bootstrap(rank_id p) {
    prefill_rank_parts& me = *prefill.at(p);
    for (;;) {
      while (auto message = network.try_receive(p)) {
        touch_rank(p);
        if (message->kind == core::control_kind::metadata) {
          me.metadata[message->key][message->from] = message->pages;
        } else if (message->kind == core::control_kind::abort) {
          me.aborts_seen.insert(message->key);
          me.sender.on_abort(*message);
        }
        me.news.notify_all();
      }
      if (prefill_done(p) && all_decode_done()) return;
      prefill_wait_us(p, poll_interval_us);
    }
  }

  bool all_decode_done() const {
    for (const auto& [rank, part] : decode) {
      if (!decode_done(rank)) return false;
    }
    return true;
  }

  void prefill_scheduler(rank_id p) {
    if (batching()) {
      batches.at(p)->serve(every_request(spec), [this](std::size_t r) { return prefill_admission(spec, r); },
                           [this, p](std::size_t r) { prefill_request(p, r); },
                           [this, p] { stop_if_dead(p); });
    } else {
      for (std::size_t r = 0; r < spec.requests.size(); ++r) prefill_request(p, r);
    }
    world.touch(done_flag(p), sim::access::write);
    prefill.at(p)->scheduler_done = true;
  }

  void prefill_request(rank_id p, std::size_t r) {
    // Aborted before it reached this rank: the engine drops it at admission (SGLang's
    // prefill drops a request decode aborted while it waited in the bootstrap or waiting
    // queue) and never opens its room. Its ABORT, whenever it lands, leaves a before-open
    // tombstone that only a newer generation's open or the table's bound ends.
    if (spec.requests[r].abort == abort_phase::before_admission) return;
    prefill_one(p, r);
  }

  // --- many requests at once (topology.concurrency > 1) ---------------------------------
  bool batching() const { return spec.topology.concurrency > 1; }

  // A prefill rank that serves many requests takes a request's pages only once every decode
  // rank has preallocated for it (SGLang's prefill bootstrap queue): a prefill pool held by
  // requests that wait for decode pages, while decode's pool is held by requests that wait
  // for prefill's transfers, would never drain. A genuine ABORT ends the wait too (the room is
  // tombstoned, and the sender's open meets the tombstone); a forged one is refused by the
  // core and ends nothing, or an adversary could make prefill take pages early.
  void await_bootstrap(rank_id p, const room_key& key) {
    prefill_rank_parts& me = *prefill.at(p);
    while (me.metadata[key].size() < decode_ranks.size() && !me.lifetimes.is_closed(key)) {
      prefill_wait_news(p);
    }
  }

  std::vector<page_index> take_source_pages(rank_id p, std::size_t r) {
    prefill_rank_parts& me = *prefill.at(p);
    std::vector<page_index> source;
    const auto try_take = [&] {
      auto allocated = me.ledger.allocate(keys[r], spec.requests[r].pages);
      if (allocated) source = allocated.value();
      return allocated.ok();
    };
    const auto idle = [&] { prefill_wait_us(p, poll_interval_us); };
    if (batching()) {
      batches.at(p)->take_pages(r, try_take, idle);
    } else {
      while (!try_take()) idle();
    }
    return source;
  }

  void prefill_one(rank_id p, std::size_t r) {
    prefill_rank_parts& me = *prefill.at(p);
    const request_spec& req = spec.requests[r];
    const room_key key = keys[r];
    // A pinned submission: the request does not exist here before its logged time.
    if (const auto at = submit_at_us(r); at && world.now_us() < *at) {
      prefill_wait_us(p, *at - world.now_us());
    }
    if (batching()) await_bootstrap(p, key);
    const std::vector<page_index> source = take_source_pages(p, r);
    for (std::uint32_t j = 0; j < source.size(); ++j) me.memory.write_canary(source[j], key, j);
    if (req.abort == abort_phase::before_open && req.origin == abort_origin::decode) {
      // The scenario's point: the ABORT reaches prefill before its sender for the room exists.
      while (!me.aborts_seen.contains(key)) prefill_wait_news(p);
    }
    // The sender tells every decode rank the outcome itself, a refusal included (aborted
    // before it existed: decode ranks that did not abort it still wait for it).
    if (!me.sender.open(key, source, decode_ranks)) {
      (void)me.ledger.release_all(key);
      return;
    }
    const bool fails_here = req.abort && req.origin == abort_origin::prefill;
    bool failed_here = false;
    const auto fail_here = [&] {
      world.emit(sim::failure_injected{key, p});
      me.sender.fail(key);  // a prefill-side failure decode did not ask for (B8)
      failed_here = true;
      open_gates_of(r);
    };
    if (fails_here && !has_gate(r) &&
        (req.abort == abort_phase::before_open || req.abort == abort_phase::before_transfer)) {
      fail_here();  // before any chunk is queued
    }
    while (me.metadata[key].size() < decode_ranks.size() && !me.lifetimes.is_closed(key)) {
      prefill_wait_news(p);
    }
    send_chunks(p, req, key, source);
    bool source_freed = false;
    while (me.sender.in_flight(key)) {
      // With a gate, the failure lands while the gate holds the transfer (scripted);
      // without one, the search decides when.
      if (fails_here && !failed_here &&
          (has_gate(r) ? gate_waiting(r) : world.fault(sim::fault_kind::abort))) {
        fail_here();
      }
      // A real scheduler frees a request's source pages once it is over for it (aborted or
      // failed), whatever its transfers still do: the ledger must hold back what they still
      // read. The search decides when, so the free lands mid-transfer as often as after it.
      if (!source_freed && me.lifetimes.is_closed(key) && world.choose(choice_free_source_now, 2) == 1) {
        me.sender.finish(key);
        source_freed = true;
      }
      me.sender.poll();
      read_status(p, key);
      if (me.sender.in_flight(key)) prefill_wait_us(p, poll_interval_us);
    }
    // A failure the scenario asks for always happens: if the transfers ended first, it lands
    // now, before the outcome goes out.
    if (fails_here && !failed_here) fail_here();
    // Done with the request: the sender gives the source back and, once nothing is in
    // flight, tells every decode rank the outcome (a failure too, so that a decode rank that
    // did not abort itself still drains before it frees: DOMAIN.md, the fixed protocol).
    // An engine finishes a request once: one that freed the source mid-transfer does not
    // again, and the sender must then forget the request from poll() alone.
    if (!source_freed) me.sender.finish(key);
    while (me.sender.tracking(key)) {  // drain-ACKs still owed
      me.sender.poll();
      read_status(p, key);
      if (me.sender.tracking(key)) prefill_wait_us(p, poll_interval_us);
    }
  }

  // The scheduler reads the request's status as a serving engine's poll loop does; the read
  // is recorded when it changes, for the checkers to hold against the table's own events.
  void read_status(rank_id p, room_key key) {
    prefill_rank_parts& me = *prefill.at(p);
    const std::optional<core::kv_status> now = me.statuses.get(key);
    const auto [last, first] = me.statuses_read.try_emplace(key, now);
    if (!first && last->second == now) return;
    last->second = now;
    if (now) me.status_seen.insert(key);
    world.emit(sim::status_read{p, key, now});
  }

  void send_chunks(rank_id p, const request_spec& req, room_key key,
                   const std::vector<page_index>& source) {
    prefill_rank_parts& me = *prefill.at(p);
    const std::size_t chunks = std::max<std::size_t>(1, req.chunks);
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t from = c * source.size() / chunks;
      const std::size_t to = (c + 1) * source.size() / chunks;
      for (rank_id d : decode_ranks) {
        const auto it = me.metadata[key].find(d);
        if (it == me.metadata[key].end()) return;
        const std::vector<page_index> src(source.begin() + from, source.begin() + to);
        const std::vector<page_index> dst(it->second.begin() + from, it->second.begin() + to);
        if (!me.sender.send_chunk(key, d, src, dst, req.siblings)) return;  // closed: stop
      }
      ++me.chunks_queued[key];
      if (c + 1 < chunks) prefill_wait_us(p, chunk_compute_us);  // computing the next chunk
    }
  }

  // --- decode --------------------------------------------------------------------------
  void decode_scheduler(rank_id d) {
    decode_rank_parts& me = *decode.at(d);
    if (batching()) {
      batches.at(d)->serve(every_request(spec), [this](std::size_t r) { return decode_admission(spec, r); },
                           [this, d](std::size_t r) { decode_one(d, r); }, [] {});
    } else {
      for (std::size_t r = 0; r < spec.requests.size(); ++r) decode_one(d, r);
    }
    open_pending_gates(me);
    // A quarantined request still waits for its drain-ACKs: the event loop keeps running
    // until they came (a late ACK confirms the quarantine and frees the pages), for as long
    // as the scenario's liveness bound; an ACK that never comes leaves the request
    // unfinished, which the liveness checker reports at quiescence.
    const auto unresolved = [&] { return any_quarantined(me) || (me.run && me.run->stores_outstanding()); };
    const std::uint64_t give_up_us = world.now_us() + spec.heal_bound_us;
    while (unresolved() && world.now_us() < give_up_us) {
      receive_all(d);
      me.receiver.check_peers();  // a dead prefill rank's teardown also ends a quarantine
      if (unresolved()) world.wait_virtual(poll_interval_us);
    }
    world.touch(done_flag(d), sim::access::write);
    me.done = true;
  }

  bool any_quarantined(const decode_rank_parts& me) const {
    return std::any_of(keys.begin(), keys.end(),
                       [&](const room_key& key) { return me.receiver.quarantined(key); });
  }

  // --- pinned timelines (request_pin) ----------------------------------------------------
  std::optional<std::uint64_t> submit_at_us(std::size_t r) const { return arrival_us(spec.requests[r]); }
  std::optional<std::uint64_t> abort_at_us(std::size_t r) const {
    const auto& pin = spec.requests[r].pin;
    return pin ? pin->abort_at_us : std::nullopt;
  }

  // Decode reaches a pinned request before its logged submission: it waits, its event loop
  // still running while an earlier request's quarantine waits for its drain-ACKs (as the
  // scheduler's closing loop does), in one sleep otherwise.
  void decode_wait_until(rank_id d, std::uint64_t at_us) {
    decode_rank_parts& me = *decode.at(d);
    while (world.now_us() < at_us) {
      if (!any_quarantined(me)) {
        world.wait_virtual(at_us - world.now_us());
        break;
      }
      receive_all(d);
      me.receiver.check_peers();
      world.wait_virtual(std::min(poll_interval_us, at_us - world.now_us()));
    }
  }

  // Decode takes exactly the logged pages (request_pin::decode_pages). A page still held (an
  // earlier request's quarantine not yet confirmed, or pages a broken core never frees) is
  // waited for with the event loop running, as the logged allocator handed a page out only
  // once it was free; decode reads its ledger first, because a refused allocate_exact is
  // misuse. Bounded: after heal_bound_us the request is overdue anyway, and decode stops for
  // good, waiting on the page by name, so that the run ends in a finding the checkers make
  // (I9 for what never finished, or a livelock or deadlock whose wait-for lines name the
  // page), never in a hang.
  void take_pinned_pages(rank_id d, std::size_t r) {
    decode_rank_parts& me = *decode.at(d);
    const std::vector<page_index>& pages = spec.requests[r].pin->decode_pages;
    const std::uint64_t give_up_us = world.now_us() + spec.heal_bound_us;
    while (const auto taken = first_taken_page(me.ledger, pages)) {
      me.pinned_wait = pinned_wait_text(me.ledger, d, keys[r], *taken);
      const sim::wait_reason reason{sim::wait_kind::queue, me.pinned_wait.c_str(), 0, 0, 0};
      if (world.now_us() >= give_up_us) world.block(reason);  // nobody wakes it
      world.block(reason, world.now_us() + poll_interval_us);
      receive_all(d);
      me.receiver.check_peers();
    }
    const bool registered = me.receiver.prealloc_exact(keys[r], pages, prefill_ranks).has_value();
    KVSIM_SIM_ASSERT(registered, "decode's ledger read its pinned pages free, yet refused them");
  }

  void open_gates_of(std::size_t r) {
    for (std::size_t g = 0; g < spec.faults.gates.size(); ++g) {
      if (spec.faults.gates[g].request == r) gates[g]->open();
    }
  }

  void open_pending_gates(decode_rank_parts& me) {
    for (std::size_t g : me.gates_to_open) gates[g]->open();
    me.gates_to_open.clear();
  }

  // The decode rank's event loop. A message about a request this rank has not reached yet
  // (a prefill that failed it before this rank preallocated) is the receiver's to hold until
  // then: real transports deliver early and out of order, so the core buffers, not the world.
  void receive_all(rank_id d) {
    decode_rank_parts& me = *decode.at(d);
    while (auto message = network.try_receive(d)) me.receiver.on_message(*message);
    if (me.run) me.run->deliver_store_completions();
  }

  bool aborts_here(const request_spec& req, rank_id d) const {
    return aborted_by_decode_rank(req, d - spec.topology.prefill_ranks);
  }
  bool has_gate(std::size_t r) const { return gated(spec, r); }

  bool gate_waiting(std::size_t r) const {
    for (std::size_t g = 0; g < spec.faults.gates.size(); ++g) {
      if (spec.faults.gates[g].request == r && gates[g]->has_waiters()) return true;
    }
    return false;
  }

  // Whether a decode-side abort of request r lands now. With a gate it lands exactly while
  // the gate holds the transfer (scripted: "during the transfer" or, with the gate in the last
  // chunk, "after the last chunk was queued"). Without one the search places it inside its
  // phase's window: during_transfer while a transfer of the request is in flight,
  // after_transfer once every chunk is queued, anytime from the first poll. An abort the
  // scenario asks for always happens: when the window closes without it (decode sees the
  // transfer complete), it lands at the last moment, before decode takes the pages.
  bool abort_due(std::size_t r, bool complete) {
    if (has_gate(r)) return gate_waiting(r) || complete;
    const request_spec& req = spec.requests[r];
    bool in_window = true;
    if (req.abort == abort_phase::during_transfer) in_window = any_in_flight(keys[r]);
    if (req.abort == abort_phase::after_transfer) in_window = all_chunks_queued(r);
    return (in_window && world.fault(sim::fault_kind::abort)) || complete;
  }

  // The world's view of the prefill side (test glue, to place an abort in its phase): a
  // decode step reading prefill ranks' books, declared as such.
  bool any_in_flight(const room_key& key) const {
    return std::any_of(prefill.begin(), prefill.end(), [&](const auto& entry) {
      world.touch(sim::object_token(sim::object_kind::rank, entry.first), sim::access::read);
      return entry.second->sender.in_flight(key);
    });
  }

  bool all_chunks_queued(std::size_t r) const {
    const std::size_t chunks = std::max<std::size_t>(1, spec.requests[r].chunks);
    return std::all_of(prefill.begin(), prefill.end(), [&](const auto& entry) {
      world.touch(sim::object_token(sim::object_kind::rank, entry.first), sim::access::read);
      const auto it = entry.second->chunks_queued.find(keys[r]);
      return it != entry.second->chunks_queued.end() && it->second >= chunks;
    });
  }

  void abort_request(decode_rank_parts& me, std::size_t r) {
    const std::optional<std::uint64_t> deadline =
        spec.faults.deadline_us ? std::optional(world.now_us() + *spec.faults.deadline_us)
                                : std::nullopt;
    me.receiver.abort(keys[r], deadline);
    for (std::size_t g = 0; g < spec.faults.gates.size(); ++g) {
      if (spec.faults.gates[g].request == r) me.gates_to_open.push_back(g);
    }
  }

  // False: the pool was full and the engine's policy failed the request instead (rejected).
  bool take_destination_pages(rank_id d, std::size_t r) {
    decode_rank_parts& me = *decode.at(d);
    bool rejected = false;
    const auto try_take = [&] {
      if (me.receiver.prealloc(keys[r], spec.requests[r].pages, prefill_ranks)) return true;
      if (spec.engine.pool_full != pool_full_policy::fail) return false;
      me.receiver.reject(keys[r], prefill_ranks);
      return rejected = true;
    };
    const auto idle = [&] { decode_idle(d); };
    if (batching()) {
      batches.at(d)->take_pages(r, try_take, idle);
    } else {
      while (!try_take()) idle();
    }
    return !rejected;
  }

  // The pool is full: keep the event loop running, so that a late drain-ACK of an earlier
  // request (a dead prefill rank's teardown, a store job's end) can give its pages back.
  void decode_idle(rank_id d) {
    receive_all(d);
    decode.at(d)->receiver.check_peers();
    world.wait_virtual(poll_interval_us);
  }

  void decode_one(rank_id d, std::size_t r) {
    decode_rank_parts& me = *decode.at(d);
    const request_spec& req = spec.requests[r];
    const room_key key = keys[r];
    if (const auto at = submit_at_us(r)) decode_wait_until(d, *at);
    if (req.pin && !req.pin->decode_pages.empty()) {
      take_pinned_pages(d, r);
    } else if (!take_destination_pages(d, r)) {
      return;
    }
    me.receiver.publish(key);
    me.registered.insert(key);
    const bool wants_abort = aborts_here(req, d);
    if (wants_abort && (req.abort == abort_phase::before_open ||
                        req.abort == abort_phase::before_transfer ||
                        req.abort == abort_phase::before_admission)) {
      abort_request(me, r);
    }
    // A pinned abort lands at its logged time, not where the search would place it; until
    // then decode does not take the request's pages even if its transfer is complete (the
    // client went away before decode finished it, as logged).
    const bool pinned_abort = wants_abort && abort_at_us(r).has_value();
    const std::uint64_t abort_time_us = abort_at_us(r).value_or(0);
    for (;;) {
      open_pending_gates(me);  // an earlier aborted request's held transfer may now resume
      receive_all(d);
      if (me.receiver.finished(key) || me.receiver.quarantined(key)) return;
      const bool complete = me.receiver.transfer_complete(key);
      if (wants_abort && !me.receiver.aborting(key) &&
          (pinned_abort ? world.now_us() >= abort_time_us : abort_due(r, complete))) {
        abort_request(me, r);
        // B1 finishes at once; otherwise the next iteration opens the gate. An abort the
        // core refused falls through to the wait below: this loop never spins without a
        // step, so a core that ignores aborts shows as a hang the world can see.
        if (me.receiver.finished(key) || me.receiver.aborting(key)) continue;
      }
      const bool abort_ahead = pinned_abort && world.now_us() < abort_time_us;
      if (complete && !abort_ahead) {
        const auto& pages = me.receiver.pages(key);
        for (std::uint32_t j = 0; j < pages.size(); ++j) me.memory.verify(pages[j], key, j);
        if (!me.run) return me.receiver.complete(key);
        auto handed = me.receiver.hand_over(key);
        KVSIM_SIM_ASSERT(handed.has_value(), "decode's receiver kept a complete transfer");
        return me.run->run(r, key, std::move(*handed));
      }
      // A held transfer resumes once the request is aborting here, whoever started the
      // abort (this rank, or a prefill-side failure it learned of); and a held transfer of a
      // request nobody aborts is only slow: it resumes too.
      if ((!req.abort || me.receiver.aborting(key)) && gate_waiting(r)) open_gates_of(r);
      me.receiver.check_deadlines();
      // Only runs with deadlines record the check (the deadline checker's clock readings).
      if (spec.faults.deadline_us) world.emit(sim::deadlines_checked{d});
      me.receiver.check_peers();
      // Polls stay 5 us apart; one ends exactly at a pinned abort's time.
      world.wait_virtual(abort_ahead ? std::min(poll_interval_us, abort_time_us - world.now_us())
                                     : poll_interval_us);
    }
  }

  const scenario_spec& spec;  // the caller keeps it alive (scenario_world.h)
  core::variant variant;
  sim::world world;
  sim::sim_liveness liveness;
  sim::sim_network network;
  std::vector<room_key> keys;
  std::vector<rank_id> prefill_ranks;
  std::vector<rank_id> decode_ranks;
  std::optional<rank_id> insider;  // its rank id (set in the constructor)
  std::map<rank_id, std::unique_ptr<prefill_rank_parts>> prefill;
  std::map<rank_id, std::unique_ptr<decode_rank_parts>> decode;
  std::vector<std::unique_ptr<sim::gate>> gates;
  std::map<rank_id, std::unique_ptr<rank_batch>> batches;  // empty unless batching()
  careless_caller careless{world, keys, decode_ranks};
};

transfer_world::transfer_world(const scenario_spec& spec, core::variant v, sim::strategy& chooser,
                               const sim::fault_profile& faults, sim::fiber_stacks* stack_pool)
    : parts_(std::make_unique<parts>(spec, v, chooser, faults, stack_pool)) {}

transfer_world::~transfer_world() = default;

sim::world& transfer_world::world() { return parts_->world; }

}  // namespace kvsim::scenarios
