#include "scenarios/decode_run.h"

#include "sim/sim_assert.h"

namespace kvsim::scenarios {
namespace {

// A forward pass: the virtual time between two decode steps of a running request.
constexpr std::uint64_t decode_step_us = 5;
constexpr std::uint64_t choice_preempt_now = 0x9ee3;

}  // namespace

void decode_run::run(std::size_t r, core::room_key key, std::vector<core::page_index> pages) {
  const engine_spec& engine = rank_.engine;
  const bool adopted = rank_.running.adopt(key, pages);
  KVSIM_SIM_ASSERT(adopted, "decode's running batch refused a request its receiver handed over");
  std::uint32_t preemptions = 0;
  for (std::uint32_t steps_left = engine.decode_steps; steps_left > 0; --steps_left) {
    rank_.world.wait_virtual(decode_step_us);
    deliver_store_completions();
    // The forward pass reads the request's KV.
    for (std::uint32_t j = 0; j < pages.size(); ++j) (void)rank_.memory.verify(pages[j], key, j);
    if (preempts_now(preemptions, steps_left - 1)) {
      key = preempt_and_resume(r, key, pages);
      ++preemptions;
    }
  }
  if (engine.store_on_finish) (void)rank_.running.store(key);
  rank_.running.finish(key);
}

// Only while another request waits for pages here (the engine preempts to make room), with
// a step left to resume for, and where the search says so.
bool decode_run::preempts_now(std::uint32_t preemptions, std::uint32_t steps_left) const {
  const engine_spec& engine = rank_.engine;
  if (engine.preemption == preemption_mode::none || preemptions >= engine.preemptions_max) {
    return false;
  }
  if (steps_left == 0 || rank_.batch == nullptr || !rank_.batch->pages_wanted()) return false;
  return rank_.world.choose(choice_preempt_now, 2) == 1;
}

core::room_key decode_run::preempt_and_resume(std::size_t r, core::room_key key,
                                              std::vector<core::page_index>& pages) {
  if (rank_.engine.preemption == preemption_mode::offload) (void)rank_.running.store(key);
  rank_.running.preempt(key);
  const core::room_key resumed{key.room, key.generation + 1};
  const auto pages_wanted = static_cast<std::uint32_t>(pages.size());
  rank_.batch->rejoin_page_queue(r);
  rank_.batch->take_pages(r, [&] {
    auto fresh = rank_.running.resume(resumed, pages_wanted);
    if (fresh) pages = *fresh;
    return fresh.has_value();
  }, rank_.idle);
  // Recompute: a forward pass writes the resumed incarnation's KV anew, a page per step.
  rank_.world.wait_virtual(decode_step_us);
  for (std::uint32_t j = 0; j < pages.size(); ++j) {
    rank_.world.step();
    rank_.memory.write_canary(pages[j], resumed, j);
  }
  return resumed;
}

void decode_run::deliver_store_completions() {
  for (const auto& done : rank_.store.take_completions()) {
    rank_.running.on_store_done(done.job, done.owner, done.stored);
  }
}

}  // namespace kvsim::scenarios
