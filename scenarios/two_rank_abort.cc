#include "scenarios/two_rank_abort.h"

#include <map>
#include <set>
#include <vector>

#include "core/kv_status.h"
#include "core/page_ledger.h"
#include "sim/kv_memory.h"
#include "sim/sim_collective.h"
#include "sim/sim_network.h"
#include "sim/sim_transfer_engine.h"
#include "sim/wait_queue.h"

namespace kvsim::scenarios {
namespace {

using core::control_kind;
using core::control_message;
using core::page_index;
using core::room_key;

constexpr core::rank_id prefill_rank = 0;
constexpr core::rank_id decode_rank = 1;
// Round r: request A is (room 7, generation 2r), request B reuses the room id as 2r + 1.
constexpr room_key request_a(std::uint32_t round) { return {7, 2 * round}; }
constexpr room_key request_b(std::uint32_t round) { return {7, 2 * round + 1}; }
// One iteration of decode's event loop takes virtual time, so a poll loop never starves
// delayed deliveries (time advances only when nothing can run).
constexpr std::uint64_t decode_poll_interval_us = 5;

std::uint32_t faults_of_this_world() {
  std::uint32_t mask = 0;
  for (sim::fault_kind kind : {sim::fault_kind::abort, sim::fault_kind::message_delay,
                               sim::fault_kind::message_duplicate, sim::fault_kind::transfer_stall}) {
    mask |= 1u << static_cast<unsigned>(kind);
  }
  return mask;
}

std::int64_t as_value(core::kv_status status) { return static_cast<std::int64_t>(status); }

}  // namespace

struct two_rank_abort_world::parts {
  parts(sim::strategy& chooser, std::uint64_t seed, two_rank_options opts)
      : options(opts),
        world(chooser, sim::world_config{.step_limit = opts.step_limit,
                                         .faults = sim::fault_profile::draw(seed, faults_of_this_world())}),
        prefill_memory(world, prefill_rank, opts.pool_pages, opts.page_bytes),
        decode_memory(world, decode_rank, opts.pool_pages, opts.page_bytes),
        prefill_ledger(prefill_rank, opts.pool_pages, world.core_sink()),
        decode_ledger(decode_rank, opts.pool_pages, world.core_sink()),
        network(world),
        engine(world, prefill_rank,
               {{prefill_rank, &prefill_memory}, {decode_rank, &decode_memory}}),
        group(world, 0, {prefill_rank, decode_rank}),
        prefill_inbox(world, "prefill control state") {
    world.spawn({prefill_rank, "prefill", 0}, [this] { prefill_scheduler(); });
    world.spawn({prefill_rank, "control", 0}, [this] { prefill_control(); });
    world.spawn({decode_rank, "decode", 0}, [this] { decode_scheduler(); });
  }

  // Prefill's bootstrap thread: metadata and ABORT per request; "status" ends it.
  void prefill_control() {
    core::messenger& inbox = network.endpoint(prefill_rank);
    for (;;) {
      const control_message message = inbox.receive();
      if (message.kind == control_kind::status) return;
      if (message.kind == control_kind::metadata && !metadata.contains(message.key)) {
        metadata[message.key] = message.pages;
      } else if (message.kind == control_kind::abort) {
        abort_requested.insert(message.key);
        // Drained already (the scheduler finished this request): the drain-ACK goes at once.
        if (prefill_done.contains(message.key)) ack_abort(message.key);
      }
      prefill_inbox.notify_all();
    }
  }

  void ack_abort(room_key key) {
    if (!ack_sent.insert(key).second) return;
    network.endpoint(prefill_rank).send(decode_rank, {control_kind::abort_ack, prefill_rank, key,
                                                      std::nullopt, {}, {}});
  }

  void prefill_scheduler() {
    for (std::uint32_t round = 0; round < options.requests; ++round) prefill_one(request_a(round));
  }

  void prefill_one(room_key a) {
    const auto source = prefill_ledger.allocate(a, options.pages_per_request).value();
    for (std::uint32_t j = 0; j < source.size(); ++j) prefill_memory.write_canary(source[j], a, j);
    while (!metadata.contains(a) && !abort_requested.contains(a)) prefill_inbox.wait();
    core::kv_status status = core::kv_status::failed;
    if (!abort_requested.contains(a)) {
      const core::lease_id lease =
          prefill_ledger.lease(a, core::lease_role::source, source).value();
      const auto handle = engine.submit({a, decode_rank, source, metadata.at(a)});
      const core::transfer_poll outcome = engine.wait(handle);
      (void)prefill_ledger.end_lease(lease);
      if (outcome == core::transfer_poll::succeeded && !abort_requested.contains(a)) {
        status = core::kv_status::success;
      }
    }
    prefill_done.insert(a);
    if (abort_requested.contains(a)) {
      ack_abort(a);
    } else {
      network.endpoint(prefill_rank).send(decode_rank, {control_kind::chunk_ready, prefill_rank,
                                                        a, std::nullopt, {}, {}});
    }
    (void)prefill_ledger.release_all(a);
    group.member(prefill_rank).all_reduce(as_value(status), core::reduce_op::min);
    group.member(prefill_rank).barrier();
  }

  // Waits for the next message about request `a` of kind `kind`.
  void decode_wait_for(room_key a, control_kind kind) {
    core::messenger& inbox = network.endpoint(decode_rank);
    for (;;) {
      const control_message message = inbox.receive();
      if (message.kind == kind && message.key == a) return;
    }
  }

  // Decode's scheduler loop: polls its inbox once per iteration, like SGLang's event loop;
  // each iteration is also a chance for the client to abort A (an abort fault), so an abort
  // can land before, during or after A's transfer.
  bool decode_waits_for(room_key a) {
    for (;;) {
      while (auto message = network.try_receive(decode_rank)) {
        if (message->key == a && message->kind == control_kind::chunk_ready) return true;
      }
      if (world.fault(sim::fault_kind::abort)) return false;
      world.wait_virtual(decode_poll_interval_us);
    }
  }

  void decode_scheduler() {
    for (std::uint32_t round = 0; round < options.requests; ++round) decode_one(round);
    network.endpoint(decode_rank).send(prefill_rank, {control_kind::status, decode_rank,
                                                      request_a(0), std::nullopt, {}, {}});
  }

  void decode_one(std::uint32_t round) {
    const room_key a = request_a(round);
    const room_key b = request_b(round);
    core::messenger& outbox = network.endpoint(decode_rank);
    const auto destination = decode_ledger.allocate(a, options.pages_per_request).value();
    outbox.send(prefill_rank, {control_kind::metadata, decode_rank, a, std::nullopt, destination, {}});
    core::kv_status status = core::kv_status::success;
    if (decode_waits_for(a)) {
      for (std::uint32_t j = 0; j < destination.size(); ++j) decode_memory.verify(destination[j], a, j);
      (void)decode_ledger.release_all(a);
    } else {
      status = core::kv_status::failed;
      outbox.send(prefill_rank, {control_kind::abort, decode_rank, a, std::nullopt, {}, {}});
      if (options.release_before_drain) {
        // The historical path: free on abort and move on; the ACK, whenever it comes, is
        // never waited for.
        (void)decode_ledger.release_all(a);
      } else {
        // Prefill may have finished A before the ABORT arrived; either way it answers with
        // exactly one drain-ACK once nothing of A is in flight.
        decode_wait_for(a, control_kind::abort_ack);
        (void)decode_ledger.release_all(a);
      }
    }

    // Request B reuses A's room id; its KV is produced here one page per step, then read back.
    const auto pages_b = decode_ledger.allocate(b, options.pages_per_request).value();
    for (std::uint32_t j = 0; j < pages_b.size(); ++j) {
      decode_memory.write_canary(pages_b[j], b, j);
      world.step();
    }
    for (std::uint32_t j = 0; j < pages_b.size(); ++j) decode_memory.verify(pages_b[j], b, j);
    if (!options.leak_request_b) (void)decode_ledger.release_all(b);

    group.member(decode_rank).all_reduce(as_value(status), core::reduce_op::min);
    if (!options.skip_final_barrier) group.member(decode_rank).barrier();
  }

  two_rank_options options;
  sim::world world;
  sim::kv_memory prefill_memory;
  sim::kv_memory decode_memory;
  core::page_ledger prefill_ledger;
  core::page_ledger decode_ledger;
  sim::sim_network network;
  sim::sim_transfer_engine engine;
  sim::collective_group group;
  sim::wait_queue prefill_inbox;
  std::map<room_key, std::vector<page_index>> metadata;
  std::set<room_key> abort_requested;
  std::set<room_key> prefill_done;
  std::set<room_key> ack_sent;
};

two_rank_abort_world::two_rank_abort_world(sim::strategy& chooser, std::uint64_t seed,
                                           two_rank_options options)
    : parts_(std::make_unique<parts>(chooser, seed, options)) {}

two_rank_abort_world::~two_rank_abort_world() = default;

sim::world& two_rank_abort_world::world() { return parts_->world; }

sim::run_outcome two_rank_abort_world::run() { return parts_->world.run(); }

nlohmann::json two_rank_abort_world::describe() const {
  const two_rank_options& o = parts_->options;
  return nlohmann::json{{"name", "two_rank_abort"},
                        {"ranks", {{{"rank", prefill_rank}, {"role", "prefill"}},
                                   {{"rank", decode_rank}, {"role", "decode"}}}},
                        {"pool_pages", o.pool_pages},
                        {"page_bytes", o.page_bytes},
                        {"pages_per_request", o.pages_per_request},
                        {"requests", o.requests},
                        {"planted", {{"release_before_drain", o.release_before_drain},
                                     {"skip_final_barrier", o.skip_final_barrier},
                                     {"leak_request_b", o.leak_request_b}}},
                        {"step_limit", o.step_limit}};
}

}  // namespace kvsim::scenarios
