#include "scenarios/two_rank_abort.h"

#include <map>
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
constexpr room_key request_a{7, 0};
constexpr room_key request_b{7, 1};  // the router reuses room id 7
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
        world(chooser, sim::world_config{opts.step_limit, 256 * 1024,
                                         sim::fault_profile::draw(seed, faults_of_this_world())}),
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

  // Prefill's bootstrap thread: metadata and ABORT for request A; "status" ends it.
  void prefill_control() {
    core::messenger& inbox = network.endpoint(prefill_rank);
    for (;;) {
      const control_message message = inbox.receive();
      if (message.kind == control_kind::status) return;
      if (message.key != request_a) continue;
      if (message.kind == control_kind::metadata && !metadata) {
        metadata = message.pages;
      } else if (message.kind == control_kind::abort) {
        abort_requested = true;
        // Drained already (scheduler finished A): the drain-ACK can go at once.
        if (prefill_done) ack_abort();
      }
      prefill_inbox.notify_all();
    }
  }

  void ack_abort() {
    if (ack_sent) return;
    ack_sent = true;
    network.endpoint(prefill_rank).send(decode_rank, {control_kind::abort_ack, prefill_rank,
                                                      request_a, std::nullopt, {}});
  }

  void prefill_scheduler() {
    const auto source = prefill_ledger.allocate(request_a, options.pages_per_request).value();
    for (std::uint32_t j = 0; j < source.size(); ++j) {
      prefill_memory.write_canary(source[j], request_a, j);
    }
    while (!metadata && !abort_requested) prefill_inbox.wait();
    core::kv_status status = core::kv_status::failed;
    if (!abort_requested) {
      const core::lease_id lease =
          prefill_ledger.lease(request_a, core::lease_role::source, source).value();
      const auto handle =
          engine.submit({request_a, decode_rank, source, *metadata});
      const core::transfer_poll outcome = engine.wait(handle);
      (void)prefill_ledger.end_lease(lease);
      if (outcome == core::transfer_poll::succeeded && !abort_requested) {
        status = core::kv_status::success;
      }
    }
    prefill_done = true;
    if (abort_requested) {
      ack_abort();
    } else {
      network.endpoint(prefill_rank).send(decode_rank, {control_kind::chunk_ready, prefill_rank,
                                                        request_a, std::nullopt, {}});
    }
    (void)prefill_ledger.release_all(request_a);
    group.member(prefill_rank).all_reduce(as_value(status), core::reduce_op::min);
    group.member(prefill_rank).barrier();
  }

  // Waits for the next message about request A of one of `kinds`.
  control_message decode_wait_for(std::initializer_list<control_kind> kinds) {
    core::messenger& inbox = network.endpoint(decode_rank);
    for (;;) {
      control_message message = inbox.receive();
      for (control_kind kind : kinds) {
        if (message.kind == kind && message.key == request_a) return message;
      }
    }
  }

  // Decode's scheduler loop: polls its inbox once per iteration, like SGLang's event loop;
  // each iteration is also a chance for the client to abort A (an abort fault), so an abort
  // can land before, during or after A's transfer.
  bool decode_waits_for_a() {
    for (;;) {
      while (auto message = network.try_receive(decode_rank)) {
        if (message->key == request_a && message->kind == control_kind::chunk_ready) return true;
      }
      if (world.fault(sim::fault_kind::abort)) return false;
      world.sleep_for(decode_poll_interval_us);
    }
  }

  void decode_scheduler() {
    core::messenger& outbox = network.endpoint(decode_rank);
    const auto destination = decode_ledger.allocate(request_a, options.pages_per_request).value();
    outbox.send(prefill_rank, {control_kind::metadata, decode_rank, request_a, std::nullopt,
                               destination});
    core::kv_status status = core::kv_status::success;
    if (decode_waits_for_a()) {
      for (std::uint32_t j = 0; j < destination.size(); ++j) {
        decode_memory.verify(destination[j], request_a, j);
      }
      (void)decode_ledger.release_all(request_a);
    } else {
      status = core::kv_status::failed;
      outbox.send(prefill_rank, {control_kind::abort, decode_rank, request_a, std::nullopt, {}});
      if (options.release_before_drain) {
        // The historical path: free on abort and move on; the ACK, whenever it comes, is
        // never waited for.
        (void)decode_ledger.release_all(request_a);
      } else {
        // Prefill may have finished A before the ABORT arrived; either way it answers with
        // exactly one drain-ACK once nothing of A is in flight.
        decode_wait_for({control_kind::abort_ack});
        (void)decode_ledger.release_all(request_a);
      }
    }

    // Request B reuses room id 7; its KV is produced here one page per step, then read back.
    const auto pages_b = decode_ledger.allocate(request_b, options.pages_per_request).value();
    for (std::uint32_t j = 0; j < pages_b.size(); ++j) {
      decode_memory.write_canary(pages_b[j], request_b, j);
      world.step();
    }
    for (std::uint32_t j = 0; j < pages_b.size(); ++j) decode_memory.verify(pages_b[j], request_b, j);
    if (!options.leak_request_b) (void)decode_ledger.release_all(request_b);

    group.member(decode_rank).all_reduce(as_value(status), core::reduce_op::min);
    if (!options.skip_final_barrier) group.member(decode_rank).barrier();
    outbox.send(prefill_rank, {control_kind::status, decode_rank, request_a, std::nullopt, {}});
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
  std::optional<std::vector<page_index>> metadata;
  bool abort_requested = false;
  bool prefill_done = false;
  bool ack_sent = false;
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
                        {"planted", {{"release_before_drain", o.release_before_drain},
                                     {"skip_final_barrier", o.skip_final_barrier},
                                     {"leak_request_b", o.leak_request_b}}},
                        {"step_limit", o.step_limit}};
}

}  // namespace kvsim::scenarios
