#include "sim/world.h"

#include <boost/fiber/algo/round_robin.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>
#include <algorithm>
#include <exception>
#include <new>
#include <utility>
#include <variant>

#include "sim/scheduling_algorithm.h"
#include "sim/sim_assert.h"

namespace kvsim::sim {

const char* to_string(run_end end) {
  switch (end) {
    case run_end::quiescent:
      return "quiescent";
    case run_end::finding:
      return "finding";
    case run_end::diverged:
      return "diverged";
    case run_end::abandoned:
      return "abandoned";
  }
  return "unknown";
}

bool scheduling_algorithm::has_ready_fibers() const noexcept {
  // Only asked when Boost migrates ready contexts between algorithms (between runs).
  return !world_.pinned_ready_.empty();
}

world::world(strategy& chooser, world_config config)
    : strategy_(chooser),
      config_(config),
      stream_(chooser),
      own_stacks_(config.stack_bytes),
      stacks_(config.stack_pool != nullptr ? *config.stack_pool : own_stacks_) {
  KVSIM_SIM_ASSERT(stacks_.stack_bytes() == config_.stack_bytes,
                   "a world was given a fiber stack pool of another stack size");
  config_.record_steps = config_.record_steps || chooser.wants_step_log();
  // Room for a typical run's log (page42: ~180 events), so that it does not grow by
  // reallocating and moving every event half a dozen times.
  events_.reserve(events_reserved);
  // A run attaches its checkers one by one (properties::checker_set: about twenty).
  checkers_.reserve(checkers_reserved);
  subscriptions_.reserve(checkers_reserved);
  subscribers_.reserve(subscribers_reserved);
}

world::~world() {
  // run() unwinds every fiber before it returns; a world that never ran has none.
  KVSIM_SIM_ASSERT(!running_, "a world was destroyed while running");
}

actor_id world::spawn(actor_name name, std::function<void()> body) {
  const std::uint64_t home = object_token(object_kind::rank, name.rank);
  return spawn(std::move(name), std::move(body), home);
}

actor_id world::spawn(actor_name name, std::function<void()> body, std::uint64_t home) {
  return spawn_actor(std::move(name), std::move(body), home, 0);
}

actor_id world::spawn_on_strand(actor_name name, std::function<void()> body, std::uint32_t strand) {
  KVSIM_SIM_ASSERT(strand != 0, "strand 0 means none");
  const std::uint64_t home = object_token(object_kind::rank, name.rank);
  return spawn_actor(std::move(name), std::move(body), home, strand);
}

namespace {

// Room for one more element, grown as push_back would grow it, so that the push_back after
// it cannot allocate (or throw).
template <class T>
void make_room_for_one(std::vector<T>& v) {
  if (v.size() == v.capacity()) v.reserve(std::max<std::size_t>(16, v.capacity() * 2));
}

}  // namespace

actor_id world::spawn_actor(actor_name name, std::function<void()> body, std::uint64_t home,
                             std::uint32_t strand) {
  // Everything that can run out of memory comes first, before the world changes: the
  // record, the lists' room, and during a run the new fiber's stack and its place in the
  // ready set. A spawn that fails leaves no half-made actor behind (teardown would resume
  // an actor without a fiber), and one that got this far cannot fail.
  try {
    const auto id = static_cast<actor_id>(actors_.size());
    auto record = std::make_unique<actor_record>();
    record->name = name;
    record->body = std::move(body);
    record->thread = name_token(to_string(record->name)) | 1;  // odd: never a delivery's identity
    if (config_.record_steps) {
      // The search names threads by their names: two actors of one name would be one thread.
      for (const auto& other : actors_) {
        KVSIM_SIM_ASSERT(other->thread != record->thread,
                         "two actors share a name in a searched world");
      }
    }
    record->created_at = running_ ? steps_ : 0;
    record->home = home;
    record->strand = strand;
    if (strand != 0) {
      if (strands_.size() <= strand) strands_.resize(strand + 1);
      make_room_for_one(strands_[strand].members);
      ready_.make_room_for(id);  // so that giving the strand back never allocates
    }
    make_room_for_one(names_);
    make_room_for_one(actors_);
    if (running_) {
      // The stack is mapped here, in the spawner's frames, where a failure is a plain
      // exception; Boost's fiber constructor then takes it from the pool's kept stacks,
      // which cannot fail (a failure in there left the fiber half made).
      stacks_.reserve(1);
      ready_.make_room_for(id);
    }
    names_.push_back(std::move(name));
    actors_.push_back(std::move(record));
    if (strand != 0) strands_[strand].members.push_back(id);  // room taken above
    if (running_) {
      try {
        launch(id);
      } catch (...) {
        // Not expected (the stack is reserved), but a fiber that failed before it existed
        // (the stack is the first thing Boost takes) leaves no actor behind either.
        spawning_ = no_actor;
        KVSIM_SIM_ASSERT(actors_[id]->context == nullptr,
                         "a fiber failed after it was handed to the world");
        if (strand != 0) strands_[strand].members.pop_back();
        actors_.pop_back();
        names_.pop_back();
        throw;
      }
    }
    return id;
  } catch (const std::bad_alloc&) {
    // During a run the spawner's frames unwind with this (an actor's bad_alloc ends the run;
    // run_actor); a spawn before run() fails in the caller's context.
    if (running_) note_out_of_memory();
    throw;
  }
}

void world::launch(actor_id id) {
  spawning_ = id;
  // Launch policy "post": the new fiber is handed to awakened() at once and runs when chosen.
  // Its stack comes from the pool's kept ones (run() and spawn() reserve them), and Boost
  // places the fiber's control block on that stack: nothing here allocates.
  boost::fibers::fiber fiber(std::allocator_arg, fiber_stack_ref(stacks_),
                            [this, id] { run_actor(id); });
  fiber.detach();
  const boost::context::stack_context& stack = stacks_.last_allocated();
  actors_[id]->stack_bottom = static_cast<char*>(stack.sp) - stack.size;
  actors_[id]->stack_bytes = stack.size;
  spawning_ = no_actor;
  KVSIM_SIM_ASSERT(actors_[id]->context != nullptr, "a new fiber was not handed to the world");
}

void world::run_actor(actor_id id) {
  bool cancelled = cancelling_;
  if (!cancelled) {
    bool unwound = true;
    try {
      emit(actor_started{actors_[id]->name});
      actors_[id]->body();
      unwound = false;
    } catch (const run_cancelled&) {
      cancelled = true;
    } catch (const actor_ended&) {
      // world::end_current_actor: finished where it stood.
    } catch (const std::bad_alloc&) {
      // The machine is out of memory, which says nothing about the core: no finding. The run
      // stops, and run() throws std::bad_alloc again in the caller's context once every
      // fiber has unwound (an exception must not leave a fiber: that would terminate).
      note_out_of_memory();
    } catch (const std::exception& e) {
      try {
        stop_with(finding{
            "crash", "actor " + to_string(actors_[id]->name) + " threw: " + e.what(), {}, {}});
      } catch (const std::bad_alloc&) {
        note_out_of_memory();  // no room for the finding's text
      }
    }
    // The landing pads that ran while the exception unwound the body mark the ends of their
    // variables' scopes in ASan's shadow, after the throw site unpoisoned the stack; frames
    // left by unwinding never run the epilogue that clears those marks. The fiber goes on
    // (set_state, emit, then Boost's terminate picks the next fiber on this stack), so clear
    // them again or its next calls land on stale stack-use-after-scope marks.
    if (unwound) unpoison_stack_region(actors_[id]->stack_bottom, actors_[id]->stack_bytes);
  }
  set_state(id, actor_state::finished);  // allocates nothing
  current_ = id;
  // The log may have to grow for this event: short of memory, the event is lost and the run
  // ends as out of memory, rather than an exception leaving the fiber (std::terminate).
  try {
    emit(actor_finished{cancelled});
  } catch (const std::bad_alloc&) {
    note_out_of_memory();
  }
}

void world::note_out_of_memory() noexcept {
  out_of_memory_ = true;
  stopping_ = true;
}

run_outcome world::run() {
  KVSIM_SIM_ASSERT(!ran_, "a world runs once");
  ran_ = true;
  // Everything the start needs is taken before any fiber exists: the actors' stacks and the
  // log's room. Short of memory, this throws std::bad_alloc here, in the caller's context,
  // with nothing to unwind; a stack that failed inside launch() would leave the world half
  // started, its fibers pointing into a world being destroyed.
  stacks_.reserve(actors_.size());
  // And the ready set's room for them: launching makes each ready (in Boost's noexcept
  // fiber start), which must not allocate.
  if (!actors_.empty()) ready_.make_room_for(static_cast<actor_id>(actors_.size() - 1));
  // A bigger world logs more: about 22 events per actor in page42 on 2, 8 and 32 decode
  // ranks (174 for 8 actors, 2,186 for 98). Room for that up front spares a many-rank run
  // the log's regrowth, which moved every event several times over.
  events_.reserve(std::max(events_.capacity(), actors_.size() * events_per_actor_reserved));
  main_context_ = boost::fibers::context::active();
  boost::fibers::use_scheduling_algorithm<scheduling_algorithm>(*this);
  running_ = true;
  for (actor_id id = 0; id < actors_.size(); ++id) launch(id);

  // Main waits outside every queue; pick_next() hands control back when the run is over.
  // The first decision is taken here: when it already ends the run (no actor at all, or a
  // strict replay that does not fit its first decision), main must not suspend, since
  // Boost.Context cannot switch from a context to itself.
  const actor_id first = decide_next_or_stop();
  if (first != main_target) {
    handoff_ = first;
    main_context_->suspend();
  }

  // Teardown: unwind every actor that has not returned, in id order, then let Boost's
  // dispatcher release the finished fibers (their stacks go back to the pool).
  cancelling_ = true;
  for (actor_id id = 0; id < actors_.size(); ++id) {
    if (actors_[id]->state != actor_state::finished) set_state(id, actor_state::ready);
  }
  while (unfinished_ > 0) boost::this_fiber::yield();
  boost::this_fiber::yield();
  boost::fibers::use_scheduling_algorithm<boost::fibers::algo::round_robin>();

  if (out_of_memory_) throw std::bad_alloc();
  strategy_.on_run_end(stream_.decisions().size());
  run_outcome outcome{run_end::quiescent, steps_, now_us_};
  if (found_) outcome.end = run_end::finding;
  if (diverged()) outcome.end = run_end::diverged;
  if (strategy_.abandoned() && !found_) outcome.end = run_end::abandoned;
  return outcome;
}

void world::awakened(boost::fibers::context* context) {
  if (context->is_context(boost::fibers::type::pinned_context)) {
    pinned_ready_.push_back(context);
    return;
  }
  if (spawning_ != no_actor && actors_[spawning_]->context == nullptr) {
    actors_[spawning_]->context = context;
    set_state(spawning_, actor_state::ready);
    return;
  }
  // Our actors are only ever made ready by the world itself, never through Boost.
  KVSIM_SIM_ASSERT(false, "a fiber the world does not know was scheduled");
}

// --- actor side -----------------------------------------------------------------------------

void world::end_current_actor() {
  KVSIM_SIM_ASSERT(current_ != no_actor, "only a running actor can end itself");
  // As for a cancelled run: ASan cannot clean the frames this exception unwinds on a fiber
  // stack (fiber_stacks.h), so the stack's redzones go before the throw.
  unpoison_stack_region(actors_[current_]->stack_bottom, actors_[current_]->stack_bytes);
  throw actor_ended{};
}

void world::throw_if_cancelled() const {
  if (!cancelling_) return;
  // ASan cannot clean the frames this exception unwinds on a fiber stack (fiber_stacks.h):
  // the run is over, so give up redzone checks on this stack rather than report false errors.
  if (current_ != no_actor) {
    unpoison_stack_region(actors_[current_]->stack_bottom, actors_[current_]->stack_bytes);
  }
  throw run_cancelled{};
}

void world::suspend_current() {
  switch_away();
  throw_if_cancelled();
}

void world::step() {
  throw_if_cancelled();
  KVSIM_SIM_ASSERT(current_ != no_actor, "step() outside an actor");
  set_state(current_, actor_state::ready);
  suspend_current();
}

bool world::block(const wait_reason& reason, std::optional<std::uint64_t> deadline_us) {
  throw_if_cancelled();
  KVSIM_SIM_ASSERT(current_ != no_actor, "block() outside an actor");
  actor_record& self = *actors_[current_];
  self.waiting_on = reason;
  self.wake_at_us = deadline_us;
  self.timed_out = false;
  set_state(current_, actor_state::blocked);
  suspend_current();
  return actors_[current_]->timed_out;
}

void world::wake(actor_id actor) {
  // Named by its stable identity, not its id (ids are renamed when spawns reorder).
  const std::uint64_t object = object_token(object_kind::actor, actors_[actor]->thread);
  if (actors_[actor]->state != actor_state::blocked) {  // already woken (its deadline)
    touch(object, access::read);
    return;
  }
  if (config_.record_steps) step_log_.touch(object, access::write, /*wake=*/true);
  set_state(actor, actor_state::ready);
}

void world::wait_virtual(std::uint64_t duration_us) {
  block(wait_reason{wait_kind::sleep, "", now_us_ + duration_us, 0, 0}, now_us_ + duration_us);
}

bool world::fault(fault_kind kind) {
  const std::uint32_t per_million = config_.faults.of(kind);
  if (per_million == 0) return false;  // off in this run's profile: not even a decision
  // Faults have stopped (DOMAIN.md I9 judges progress from here): not a decision either.
  if (config_.faults.stopped(kind, now_us_)) return false;
  decision_request request;
  request.kind = decision_kind::fault;
  request.options = 2;
  request.tag = static_cast<std::uint64_t>(kind);
  request.fault_per_million = per_million;
  request.step = steps_;
  const bool fired = stream_.decide(request) == 1;
  if (fired) emit(fault_fired{to_string(kind)});
  return fired;
}

std::uint32_t world::choose(std::uint64_t tag, std::uint32_t options) {
  if (options <= 1) return 0;
  decision_request request;
  request.kind = decision_kind::data;
  request.options = options;
  request.tag = tag;
  request.step = steps_;
  return stream_.decide(request);
}

void world::post(std::uint64_t delay_us, std::function<void()> deliver) {
  // Named by its poster and the poster's count, so that two deliveries posted by different
  // threads keep their names in either order (their ids swap).
  std::uint64_t thread = 0;
  if (config_.record_steps) {
    const std::uint64_t poster = current_ == no_actor ? 0 : actors_[current_]->thread;
    const std::uint64_t ordinal = posts_by_thread_[poster]++;
    thread = (poster ^ (ordinal + 1) * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
    thread &= ~std::uint64_t{1};  // even: never an actor's identity
  }
  const std::uint64_t id = next_delivery_++;
  const std::uint64_t ready_at_us = now_us_ + delay_us;
  deliveries_.emplace(id, pending_delivery{ready_at_us, std::move(deliver), thread, steps_});
  if (ready_at_us <= now_us_) {
    due_.push_back(id);  // the newest id: due_ stays ascending
  } else {
    not_yet_due_.emplace_back(ready_at_us, id);
    std::push_heap(not_yet_due_.begin(), not_yet_due_.end(), std::greater<>{});
  }
}

void world::report(finding f) { stop_with(std::move(f)); }

void world::emit(sim_event_body body) {
  // Built in place (C++20 aggregate emplace): one move of the body, not two.
#if defined(__cpp_aggregate_paren_init)
  events_.emplace_back(steps_, now_us_, current_, std::move(body));  // built in place
#else
  // A compiler without parenthesised aggregate initialisation (clang before 16): one move.
  events_.push_back(sim_event{steps_, now_us_, current_, std::move(body)});
#endif
}

// --- scheduler side -------------------------------------------------------------------------

void world::stop_with(finding f) {
  if (!found_) found_ = std::move(f);
  stopping_ = true;
}

void world::add_checker(checker& c) {
  checkers_.push_back(&c);
  subscriptions_.push_back(c.subscriptions());
  // Indexed again per kind as events come: the new checker may read any kind.
  ++subscriber_generation_;
  subscribers_.clear();
}

const world::subscriber_range& world::subscribers_of(std::size_t kind) {
  subscriber_range& range = kind_subscribers_[kind];
  if (range.generation != subscriber_generation_) {
    range.first = static_cast<std::uint32_t>(subscribers_.size());
    for (std::size_t i = 0; i < checkers_.size(); ++i) {
      if (subscriptions_[i].contains(kind)) subscribers_.push_back(checkers_[i]);
    }
    range.count = static_cast<std::uint32_t>(subscribers_.size()) - range.first;
    range.generation = subscriber_generation_;
  }
  return range;
}

void world::feed_checkers() {
  for (; events_checked_ < events_.size(); ++events_checked_) {
    const sim_event& e = events_[events_checked_];
    const subscriber_range range = subscribers_of(event_kind::of(e));
    for (std::uint32_t i = range.first; i < range.first + range.count; ++i) {
      if (auto f = subscribers_[i]->observe(e, events_checked_)) {
        stop_with(std::move(*f));
        return;
      }
    }
  }
}

bool world::advance_time() {
  std::optional<std::uint64_t> next;
  if (!timers_.empty()) next = timers_.begin()->first;
  if (!not_yet_due_.empty()) {
    const std::uint64_t delivery_at_us = not_yet_due_.front().first;
    next = next ? std::min(*next, delivery_at_us) : delivery_at_us;
  }
  if (!next) return false;
  now_us_ = std::max(now_us_, *next);
  fence_pending_ = true;
  while (!not_yet_due_.empty() && not_yet_due_.front().first <= now_us_) {
    const std::uint64_t id = not_yet_due_.front().second;
    std::pop_heap(not_yet_due_.begin(), not_yet_due_.end(), std::greater<>{});
    not_yet_due_.pop_back();
    due_.insert(std::lower_bound(due_.begin(), due_.end(), id), id);
  }
  while (!timers_.empty() && timers_.begin()->first <= now_us_) {
    const actor_id id = timers_.begin()->second;
    actors_[id]->timed_out = true;
    set_state(id, actor_state::ready);
  }
  return true;
}

void world::set_state(actor_id id, actor_state next) {
  actor_record& actor = *actors_[id];
  const actor_state previous = actor.state;
  // Ready while another actor of its strand runs: parked until that one blocks or returns.
  // Teardown unwinds everyone, strands or not.
  if (next == actor_state::ready && actor.strand != 0 && !cancelling_) {
    const actor_id holder = strands_[actor.strand].holder;
    if (holder != no_actor && holder != id) next = actor_state::parked;
  }
  if (previous == actor_state::running && actor.strand != 0 && !cancelling_ &&
      (next == actor_state::blocked || next == actor_state::finished)) {
    give_strand_back(id);
    // A strand's walks (take, give back, the parked list) stay as long as its live members.
    if (next == actor_state::finished) std::erase(strands_[actor.strand].members, id);
  }
  // The room an insert below needs, before anything changes: short of memory, this throws
  // with the actor, the ready set and the timers still in agreement.
  if (next == actor_state::ready) ready_.make_room_for(id);
  if (next == actor_state::blocked && actor.wake_at_us) make_room_for_one(timers_);
  if (previous == actor_state::ready) {
    ready_.erase(id);
  } else if (previous == actor_state::blocked) {
    if (actor.wake_at_us) {
      const std::pair<std::uint64_t, actor_id> timer{*actor.wake_at_us, id};
      const auto at = std::lower_bound(timers_.begin(), timers_.end(), timer);
      KVSIM_SIM_ASSERT(at != timers_.end() && *at == timer, "a timed block has its timer");
      timers_.erase(at);
    }
    if (next != actor_state::blocked) {
      actor.wake_at_us.reset();
      actor.waiting_on = wait_reason{};
    }
  }
  if (previous == actor_state::created || previous == actor_state::finished) {
    KVSIM_SIM_ASSERT(previous != actor_state::finished, "a finished actor cannot change state");
    ++unfinished_;
  }
  actor.state = next;
  if (next == actor_state::ready) {
    ready_.insert(id);
  } else if (next == actor_state::blocked && actor.wake_at_us) {
    const std::pair<std::uint64_t, actor_id> timer{*actor.wake_at_us, id};
    timers_.insert(std::lower_bound(timers_.begin(), timers_.end(), timer), timer);
  } else if (next == actor_state::finished) {
    --unfinished_;
  }
}

void world::take_strand(actor_id id) {
  strand_record& strand = strands_[actors_[id]->strand];
  if (strand.holder == id) return;  // preempted at a step and chosen again: still its turn
  KVSIM_SIM_ASSERT(strand.holder == no_actor, "an actor runs while another holds its strand");
  strand.holder = id;
  for (const actor_id member : strand.members) {
    actor_record& other = *actors_[member];
    if (member == id || other.state != actor_state::ready) continue;
    ready_.erase(member);
    other.state = actor_state::parked;
  }
}

void world::give_strand_back(actor_id id) {
  strand_record& strand = strands_[actors_[id]->strand];
  KVSIM_SIM_ASSERT(strand.holder == id, "only the actor that runs on a strand gives it back");
  strand.holder = no_actor;
  for (const actor_id member : strand.members) {
    actor_record& other = *actors_[member];
    if (other.state != actor_state::parked) continue;
    ready_.make_room_for(member);
    ready_.insert(member);
    other.state = actor_state::ready;
  }
}

actor_id world::finish_running() {
  running_ = false;
  current_ = no_actor;
  return main_target;
}

boost::fibers::context* world::pick_during_teardown() {
  if (!ready_.empty()) {
    const actor_id id = ready_.front();
    set_state(id, actor_state::running);
    current_ = id;
    return actors_[id]->context;
  }
  if (pinned_ready_.empty()) return nullptr;
  boost::fibers::context* next = pinned_ready_.front();
  pinned_ready_.erase(pinned_ready_.begin());
  return next;
}

boost::fibers::context* world::pick_next() {
  // A handoff decided by switch_away() is honoured even when that decision ended the run.
  actor_id next = handoff_;
  handoff_ = no_handoff;
  if (next == no_handoff) {
    if (!running_) return pick_during_teardown();
    next = decide_next_or_stop();
  }
  return next == main_target ? main_context_ : actors_[next]->context;
}

void world::switch_away() {
  const actor_id self = current_;
  const actor_id next = decide_next_or_stop();
  if (next == self) return;  // chosen again: keep running, no context switch
  handoff_ = next;
  boost::fibers::context::active()->suspend();
}

actor_id world::decide_next_or_stop() {
  try {
    return decide_next();
  } catch (const std::bad_alloc&) {
    // Whatever the decision had half done (a delivery, a finding's text, the log) is moot:
    // the run is over, and teardown needs only the actors' records, which every state change
    // keeps whole (set_state takes its room before it changes anything).
    note_out_of_memory();
    // The frames the exception unwound may leave stale scope marks in ASan's shadow of an
    // actor's stack (fiber_stacks.h), below the frames that go on from here: clear them, as
    // run_actor does after an unwound body. Main's stack is ASan's to clean.
    const boost::fibers::context* const here = boost::fibers::context::active();
    if (here != main_context_) {
      for (const auto& actor : actors_) {
        if (actor->context == here) unpoison_stack_region(actor->stack_bottom, actor->stack_bytes);
      }
    }
    return finish_running();
  }
}

void world::list_options() {
  ready_.for_each([&](actor_id id) { subjects_.push_back(id); });
  // Stable identities only for a strategy that reads the step log: the step loop of every
  // other run stays as it was.
  if (config_.record_steps) {
    ready_.for_each([&](actor_id id) { threads_.push_back(actors_[id]->thread); });
  }
  for (const std::uint64_t id : due_) {
    subjects_.push_back(delivery_bit | id);
    if (config_.record_steps) threads_.push_back(deliveries_.at(id).thread);
  }
  if (!config_.record_steps) return;
  for (const strand_record& strand : strands_) {
    for (const actor_id member : strand.members) {
      if (actors_[member]->state == actor_state::parked) parked_.push_back(actors_[member]->thread);
    }
  }
}

std::uint64_t world::choose_option(bool listed, std::size_t option_count) {
  decision_request request;
  request.kind = decision_kind::schedule;
  request.options = static_cast<std::uint32_t>(option_count);
  request.subjects = subjects_;  // empty unless listed
  request.step = steps_;
  request.threads = threads_;
  request.steps = config_.record_steps ? &step_log_ : nullptr;
  request.after_fence = fence_pending_;
  request.parked = parked_;
  if (listed) return subjects_[stream_.decide(request)];
  const auto option_subject = [&](std::uint32_t option) -> std::uint64_t {
    return option < ready_.size() ? ready_.nth(option) : delivery_bit | due_[option - ready_.size()];
  };
  stream_.decide_counted(request, option_subject);
  return stream_.decisions().back().subject;
}

void world::run_delivery(std::uint64_t chosen) {
  const std::uint64_t id = chosen & ~delivery_bit;
  due_.erase(std::lower_bound(due_.begin(), due_.end(), id));
  auto node = deliveries_.extract(id);
  if (config_.record_steps) {
    step_log_.begin_step(node.mapped().thread, chosen, node.mapped().created_at, fence_pending_);
  }
  fence_pending_ = false;
  current_ = no_actor;
  node.mapped().deliver();
}

actor_id world::finish_at_quiescence() {
  if (!audited_) {
    audited_ = true;
    // The audits' events belong to the world, not to the actor that returned last.
    const actor_id last = std::exchange(current_, no_actor);
    for (const auto& audit : audits_) audit();
    current_ = last;
    feed_checkers();  // the audits' events first: one may end the run
    if (stopping_) return finish_running();
  }
  for (checker* c : checkers_) {
    if (auto f = c->at_quiescence()) {
      stop_with(std::move(*f));
      break;
    }
  }
  return finish_running();
}

actor_id world::decide_next() {
  for (;;) {
    feed_checkers();
    if (!stopping_ && (diverged() || strategy_.abandoned())) stopping_ = true;
    if (stopping_) return finish_running();
    if (steps_ >= config_.step_limit) {
      stop_with_livelock();
      continue;
    }
    KVSIM_SIM_ASSERT(due_.size() + not_yet_due_.size() == deliveries_.size(),
                     "every pending delivery is due or not yet due");
    // Listed only for a strategy that reads them; the random walk reads only their count, and
    // the chosen one is named afterwards (choose_option).
    const bool listed = config_.record_steps || strategy_.reads_subjects();
    const std::size_t option_count = ready_.size() + due_.size();
    subjects_.clear();
    threads_.clear();
    parked_.clear();
    if (listed) list_options();
    if (option_count == 0) {
      if (advance_time()) continue;
      if (unfinished_ == 0) return finish_at_quiescence();
      stop_with_deadlock();
      continue;
    }
    const std::uint64_t chosen = choose_option(listed, option_count);
    ++steps_;
    if (diverged() || strategy_.abandoned()) continue;
    if ((chosen & delivery_bit) != 0) {
      run_delivery(chosen);
      continue;
    }
    const auto id = static_cast<actor_id>(chosen);
    if (config_.record_steps) {
      step_log_.begin_step(actors_[id]->thread, chosen, actors_[id]->created_at, fence_pending_);
      // An actor's step may change anything its home owns, and its own run state.
      if (actors_[id]->home != no_home) step_log_.touch(actors_[id]->home, access::write);
      step_log_.touch(object_token(object_kind::actor, actors_[id]->thread), access::write);
    }
    fence_pending_ = false;
    set_state(id, actor_state::running);
    if (actors_[id]->strand != 0) take_strand(id);
    current_ = id;
    return id;
  }
}

}  // namespace kvsim::sim
