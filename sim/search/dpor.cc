#include "sim/search/dpor.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "sim/search/replay.h"
#include "sim/sim_assert.h"
#include "sim/step_log.h"

namespace kvsim::sim {
namespace {

constexpr std::uint64_t no_last_actor = ~std::uint64_t{0};
constexpr std::uint64_t abort_tag = static_cast<std::uint64_t>(fault_kind::abort);
// Distinct states are counted up to this many (about 400 MB of digests): a long search
// reports at least this many, without growing without bound.
constexpr std::size_t distinct_states_counted = 8'000'000;

bool is_delivery(std::uint64_t subject) { return (subject & delivery_bit) != 0; }

bool contains(const std::vector<std::uint64_t>& set, std::uint64_t value) {
  return std::find(set.begin(), set.end(), value) != set.end();
}

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL + (a << 6) + (a >> 2));
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 32;
  return x;
}

// Union of two step footprints (sorted by object): a write hides a read.
void merge_into(std::vector<object_access>& into, const std::vector<object_access>& from) {
  for (const object_access& a : from) {
    const auto at = std::lower_bound(into.begin(), into.end(), a.object,
                                     [](const object_access& e, std::uint64_t o) { return e.object < o; });
    if (at != into.end() && at->object == a.object) {
      at->mode = combined(at->mode, a.mode);
      at->wake = at->wake || a.wake;
    } else {
      into.insert(at, a);
    }
  }
}

struct sleeper {
  std::uint64_t thread = 0;
  std::vector<object_access> footprint;  // of its step here, over every run below it
};

bool asleep(const std::vector<sleeper>& set, std::uint64_t thread) {
  return std::any_of(set.begin(), set.end(), [thread](const sleeper& s) { return s.thread == thread; });
}

// One decision on the current path of the search.
struct node {
  decision_kind kind = decision_kind::schedule;
  std::uint32_t options = 0;
  std::uint64_t tag = 0;
  std::uint32_t chosen = 0;
  std::vector<bool> tried;  // fault and data decisions: per option, taken or excluded

  // Schedule decisions only.
  std::vector<std::uint64_t> subjects;
  std::vector<std::uint64_t> threads;
  std::vector<std::uint64_t> parked;      // ready, but behind their strand's running actor
  std::uint64_t step = 0;                 // the step this decision starts (1-based)
  std::vector<std::uint64_t> backtrack;   // threads to run here: run, running or still to run
  std::vector<std::uint64_t> explored;    // threads run here so far (the current one included)
  std::vector<sleeper> sleep;             // asleep on arrival
  std::vector<sleeper> done;              // run here before the current one
  std::vector<object_access> chosen_footprint;  // the current one's step, over runs below
  std::uint64_t last_actor = no_last_actor;     // before this decision (preemption bound)
  std::uint32_t preemptions = 0;
  std::uint64_t default_thread = 0;             // the option that is no deviation
  std::uint32_t deviations = 0;                 // before this decision (deviation bound)

  // Choosing option i here deviates from the default run: another thread than the default
  // one, a fault that fires, a data choice other than the first.
  bool deviates(std::uint32_t i) const {
    if (kind == decision_kind::schedule) return threads[i] != default_thread;
    return i != 0;
  }

  std::uint64_t chosen_thread() const { return threads[chosen]; }
  decision recorded() const {
    return decision{kind, options, chosen, kind == decision_kind::schedule ? subjects[chosen] : tag};
  }
};

bool is_preemption(const std::vector<std::uint64_t>& subjects, std::uint64_t subject,
                   std::uint64_t last_actor) {
  if (is_delivery(subject) || last_actor == no_last_actor || subject == last_actor) return false;
  return contains(subjects, last_actor);
}

// The strategy of one run: replays the path's first `prefix` decisions, then takes a new
// decision at every further point and appends it to the path.
class dpor_chooser final : public strategy {
 public:
  dpor_chooser(std::vector<node>& path, std::size_t prefix, const dpor_options& options,
               dpor_result& result)
      : path_(path), prefix_(prefix), options_(options), result_(result) {}

  std::string name() const override { return "dpor"; }
  bool wants_step_log() const override { return true; }
  bool abandoned() const override { return abandoned_; }

  std::uint32_t choose(const decision_request& request) override {
    if (divergence_ || abandoned_) return 0;  // the world stops at its next schedule decision
    const std::uint64_t index = next_++;
    const std::vector<object_access>* ended = nullptr;
    if (request.kind == decision_kind::schedule) ended = step_ended(request);
    if (index < prefix_) return replay_choice(index, request);
    return new_choice(request, ended);
  }

  void on_run_end(std::uint64_t decisions_taken) override {
    if (!divergence_ && !abandoned_ && decisions_taken < prefix_) {
      divergence_ = divergence{decisions_taken, describe(path_[decisions_taken].recorded()),
                               "the run ended after " + std::to_string(decisions_taken) +
                                   " decisions"};
    }
  }

 private:
  // The step the previous schedule decision started has ended: its footprint joins that
  // decision's (a step with fault or data decisions differs between the runs below it).
  const std::vector<object_access>* step_ended(const decision_request& request) {
    if (!last_schedule_ || request.steps == nullptr || request.steps->empty()) return nullptr;
    const std::vector<object_access>& accesses = request.steps->steps().back().accesses;
    merge_into(path_[*last_schedule_].chosen_footprint, accesses);
    after_fence_ = request.after_fence;
    return &accesses;
  }

  std::uint32_t replay_choice(std::uint64_t index, const decision_request& request) {
    const node& n = path_[index];
    const bool same =
        n.kind == request.kind && n.options == request.options &&
        (n.kind == decision_kind::schedule
             ? std::equal(n.threads.begin(), n.threads.end(), request.threads.begin(),
                          request.threads.end())
             : n.tag == request.tag);
    if (!same) {
      divergence_ = divergence{index, describe(n.recorded()), describe(request)};
      return 0;
    }
    ran(n, index);
    return n.chosen;
  }

  std::uint32_t new_choice(const decision_request& request,
                           const std::vector<object_access>* ended) {
    node n;
    n.kind = request.kind;
    n.options = request.options;
    n.tag = request.tag;
    if (request.kind == decision_kind::schedule) {
      if (!choose_schedule(n, request, ended)) return 0;
    } else {
      choose_default(n, request);
    }
    path_.push_back(std::move(n));
    ran(path_.back(), path_.size() - 1);
    return path_.back().chosen;
  }

  // A new schedule node: its options within the bounds, its sleep set, its pick (the default
  // first). False when the run ends here instead (abandoned: bounded, or every option asleep).
  bool choose_schedule(node& n, const decision_request& request, const std::vector<object_access>* ended) {
    n.subjects.assign(request.subjects.begin(), request.subjects.end());
    n.threads.assign(request.threads.begin(), request.threads.end());
    n.parked.assign(request.parked.begin(), request.parked.end());
    KVSIM_SIM_ASSERT(n.threads.size() == n.subjects.size(), "a schedule option without an identity");
    n.step = request.step + 1;
    n.last_actor = last_actor_;
    n.preemptions = preemptions_;
    n.deviations = deviations_;
    // The default run continues the actor that ran last, else takes the first option.
    n.default_thread = n.threads.front();
    for (std::uint32_t i = 0; i < n.options; ++i) {
      if (n.subjects[i] == n.last_actor) n.default_thread = n.threads[i];
    }
    const bool sleep_sets = options_.mode != reduction::none;
    if (sleep_sets && last_schedule_ && !after_fence_ && ended != nullptr) {
      n.sleep = passed_on(path_[*last_schedule_], *ended);
    }
    std::optional<std::uint32_t> pick;
    bool any_within_bound = false;
    for (std::uint32_t i = 0; i < n.options; ++i) {
      if (options_.preemption_bound && is_preemption(n.subjects, n.subjects[i], n.last_actor) &&
          n.preemptions + 1 > *options_.preemption_bound) {
        ++result_.beyond_bound;
        continue;
      }
      if (beyond_deviation_bound(n, i)) {
        ++result_.beyond_bound;
        continue;
      }
      any_within_bound = true;
      if (asleep(n.sleep, n.threads[i])) {
        ++result_.pruned;
        continue;
      }
      if (options_.mode != reduction::dpor) n.backtrack.push_back(n.threads[i]);
      // The default (continuing the actor that ran last: no preemption) first.
      if (!pick || n.threads[i] == n.default_thread) pick = i;
    }
    if (!any_within_bound) {
      // Only a deviation beyond its bound could go on (the default thread sleeps or is beyond
      // the preemption bound): the run ends here, as bounded.
      abandoned_ = true;
      return false;
    }
    if (!pick) {
      // Every option sleeps: each continuation is a reordering of one already run.
      abandoned_ = true;
      ++result_.sleep_blocked;
      return false;
    }
    n.chosen = *pick;
    if (options_.mode == reduction::dpor) n.backtrack.push_back(n.chosen_thread());
    n.explored.push_back(n.chosen_thread());
    return true;
  }

  // A new fault or draw node: the default (0) first; options beyond the deviation bound, a
  // fault the world has off, or one past the fault bound are marked tried, never run.
  void choose_default(node& n, const decision_request& request) {
    n.tried.assign(n.options, false);
    n.deviations = deviations_;
    for (std::uint32_t i = 1; i < n.options; ++i) {
      if (beyond_deviation_bound(n, i)) {
        n.tried[i] = true;
        ++result_.beyond_bound;
      }
    }
    if (request.kind == decision_kind::fault) {
      const bool counted = request.tag != abort_tag;
      if (request.fault_per_million == 0) {
        n.tried[1] = true;  // off in this world: cannot fire
      } else if (counted && faults_ >= options_.max_faults) {
        n.tried[1] = true;
        ++result_.faults_cut;
      }
    }
    n.chosen = 0;
    n.tried[0] = true;
  }

  // The sleep set the previous schedule decision passes on, now that its step is known:
  // what slept there or ran there before, minus its own thread and what its step touched.
  static std::vector<sleeper> passed_on(const node& from, const std::vector<object_access>& step) {
    std::vector<sleeper> sleep;
    for (const std::vector<sleeper>* set : {&from.sleep, &from.done}) {
      for (const sleeper& s : *set) {
        if (s.thread != from.chosen_thread() && !conflicts(s.footprint, step)) sleep.push_back(s);
      }
    }
    return sleep;
  }

  bool beyond_deviation_bound(const node& n, std::uint32_t i) const {
    return options_.deviation_bound && n.deviates(i) && n.deviations + 1 > *options_.deviation_bound;
  }

  void ran(const node& n, std::size_t index) {
    if (n.deviates(n.chosen)) ++deviations_;
    if (n.kind == decision_kind::schedule) {
      const std::uint64_t subject = n.subjects[n.chosen];
      if (!is_delivery(subject)) {
        if (is_preemption(n.subjects, subject, last_actor_)) ++preemptions_;
        last_actor_ = subject;
      }
      last_schedule_ = index;
      after_fence_ = false;
    } else if (n.kind == decision_kind::fault && n.chosen == 1 && n.tag != abort_tag) {
      ++faults_;
    }
  }

  std::vector<node>& path_;
  std::size_t prefix_;
  const dpor_options& options_;
  dpor_result& result_;
  std::uint64_t next_ = 0;
  std::optional<std::size_t> last_schedule_;
  bool after_fence_ = false;
  std::uint64_t last_actor_ = no_last_actor;
  std::uint32_t preemptions_ = 0;
  std::uint32_t deviations_ = 0;
  std::uint32_t faults_ = 0;
  bool abandoned_ = false;
};

// Happens-before over a run's steps, with vector clocks (one entry per thread: how many of
// that thread's steps are ordered before or at the step).
struct run_order {
  std::vector<std::uint32_t> thread_of;  // per step: thread index
  std::vector<std::uint32_t> ordinal;    // per step: 1-based count within its thread
  std::vector<std::vector<std::uint32_t>> clock;
  std::size_t threads = 0;

  bool before(std::size_t a, std::size_t b) const {  // a happens before (or is) b
    return clock[b][thread_of[a]] >= ordinal[a];
  }
};

struct race {
  std::size_t first = 0;
  std::size_t second = 0;
};

void join(std::vector<std::uint32_t>& into, const std::vector<std::uint32_t>& other) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], other[i]);
}

// The races in which step k is the second step: each conflicting step j of another thread that
// nothing else orders before k (`base`: k's clock before its conflicts), and whose order with k
// can be reversed (j neither created k's thread nor woke it for this very step).
void add_races(const run_order& order, const std::vector<step_record>& steps, std::size_t k,
               const std::vector<std::uint32_t>& base, const std::vector<std::size_t>& conflicting,
               std::optional<std::size_t> thread_before, std::vector<race>& races) {
  const step_record& s = steps[k];
  const std::uint32_t t = order.thread_of[k];
  for (const std::size_t j : conflicting) {
    if (order.thread_of[j] == t) continue;
    std::vector<std::uint32_t> others = base;
    for (const std::size_t i : conflicting) {
      if (i != j) join(others, order.clock[i]);
    }
    if (others[order.thread_of[j]] >= order.ordinal[j]) continue;  // ordered through another
    if (s.created_at == j + 1) continue;  // j created this thread
    const bool woke_it =
        !is_delivery(s.subject) && (!thread_before || *thread_before < j) &&
        std::any_of(steps[j].accesses.begin(), steps[j].accesses.end(), [&](const object_access& a) {
          return a.wake && a.object == object_token(object_kind::actor, s.thread);
        });
    if (woke_it) continue;
    races.push_back(race{j, k});
  }
}

// Orders the run's steps and lists its races: two dependent steps of different threads,
// the first not ordered before the second through anything else, and reversible (the
// first neither created the second's thread nor woke it for this very step).
run_order order_steps(const std::vector<step_record>& steps, std::vector<race>* races) {
  run_order order;
  const std::size_t n = steps.size();
  std::unordered_map<std::uint64_t, std::uint32_t> index_of;
  order.thread_of.resize(n);
  order.ordinal.resize(n);
  std::vector<std::uint32_t> counts;
  for (std::size_t k = 0; k < n; ++k) {
    const auto [it, fresh] = index_of.try_emplace(steps[k].thread, static_cast<std::uint32_t>(counts.size()));
    if (fresh) counts.push_back(0);
    order.thread_of[k] = it->second;
    order.ordinal[k] = ++counts[it->second];
  }
  order.threads = counts.size();
  order.clock.assign(n, std::vector<std::uint32_t>(order.threads, 0));

  struct object_history {
    std::optional<std::size_t> last_write;
    std::vector<std::size_t> reads;    // since the last write
    std::vector<std::size_t> updates;  // since the last write
  };
  std::unordered_map<std::uint64_t, object_history> objects;
  std::vector<std::uint32_t> everything(order.threads, 0);  // join of every step so far
  std::vector<std::uint32_t> fence(order.threads, 0);       // join before the last fence
  std::vector<std::optional<std::size_t>> last_of_thread(order.threads);
  std::vector<std::size_t> conflicting;
  for (std::size_t k = 0; k < n; ++k) {
    const step_record& s = steps[k];
    const std::uint32_t t = order.thread_of[k];
    if (s.after_fence) fence = everything;
    std::vector<std::uint32_t> base = fence;
    if (last_of_thread[t]) join(base, order.clock[*last_of_thread[t]]);
    if (s.created_at > 0 && s.created_at - 1 < k) join(base, order.clock[s.created_at - 1]);
    conflicting.clear();
    for (const object_access& a : s.accesses) {
      const auto it = objects.find(a.object);
      if (it == objects.end()) continue;
      const object_history& h = it->second;
      if (h.last_write) conflicting.push_back(*h.last_write);
      // Since the last write: a read meets the updates, an update the reads, a write both.
      if (a.mode != access::read) conflicting.insert(conflicting.end(), h.reads.begin(), h.reads.end());
      if (a.mode != access::update) conflicting.insert(conflicting.end(), h.updates.begin(), h.updates.end());
    }
    std::sort(conflicting.begin(), conflicting.end());
    conflicting.erase(std::unique(conflicting.begin(), conflicting.end()), conflicting.end());
    std::vector<std::uint32_t>& clock = order.clock[k];
    clock = base;
    for (const std::size_t j : conflicting) join(clock, order.clock[j]);
    clock[t] = order.ordinal[k];

    if (races != nullptr) add_races(order, steps, k, base, conflicting, last_of_thread[t], *races);

    join(everything, clock);
    last_of_thread[t] = k;
    for (const object_access& a : s.accesses) {
      object_history& h = objects[a.object];
      if (a.mode == access::write) {
        h.last_write = k;
        h.reads.clear();
        h.updates.clear();
      } else if (a.mode == access::read) {
        h.reads.push_back(k);
      } else {
        h.updates.push_back(k);
      }
    }
  }
  return order;
}

// The latest decision before path[at_index] at which `q` was an option: q runs there (unless
// that decision already runs it, or has it asleep), within the search's bounds.
void start_before_turn(std::vector<node>& path, std::size_t at_index, std::uint64_t q,
                       const dpor_options& options, dpor_result& result) {
  for (std::size_t i = at_index; i-- > 0;) {
    node& n = path[i];
    if (n.kind != decision_kind::schedule) continue;
    const auto option = std::find(n.threads.begin(), n.threads.end(), q);
    if (option == n.threads.end()) continue;
    if (contains(n.backtrack, q) || asleep(n.sleep, q)) return;
    const auto index = static_cast<std::uint32_t>(option - n.threads.begin());
    const bool beyond_deviation = options.deviation_bound && n.deviates(index) &&
                                  n.deviations + 1 > *options.deviation_bound;
    const bool beyond_preemption = options.preemption_bound &&
                                   is_preemption(n.subjects, n.subjects[index], n.last_actor) &&
                                   n.preemptions + 1 > *options.preemption_bound;
    if (beyond_deviation || beyond_preemption) {
      ++result.beyond_bound;
      return;
    }
    n.backtrack.push_back(q);
    return;
  }
}

// Source-DPOR's step for one race (j, k): v = the steps after j not ordered after it, then
// k; its initials (threads whose first step in v has no predecessor in v) can each start the
// reversed order from the state before j. Unless the decision there already runs one of
// them (or has one asleep), one is added.
void reverse_race(const race& r, const run_order& order, const std::vector<step_record>& steps,
                  std::vector<node>& path, std::size_t at_index, const dpor_options& options,
                  dpor_result& result) {
  node& at = path[at_index];
  std::vector<std::size_t> v;
  for (std::size_t i = r.first + 1; i < r.second; ++i) {
    if (!order.before(r.first, i)) v.push_back(i);
  }
  v.push_back(r.second);
  std::vector<std::uint32_t> first_in_v(order.threads, 0);  // smallest ordinal in v; 0: none
  for (const std::size_t i : v) {
    std::uint32_t& first = first_in_v[order.thread_of[i]];
    if (first == 0 || order.ordinal[i] < first) first = order.ordinal[i];
  }
  std::vector<std::uint64_t> initials;
  for (const std::size_t x : v) {
    const std::uint32_t tx = order.thread_of[x];
    if (first_in_v[tx] != order.ordinal[x]) continue;  // not its thread's first step in v
    bool has_predecessor = false;
    for (std::uint32_t u = 0; u < order.threads && !has_predecessor; ++u) {
      if (u == tx || first_in_v[u] == 0) continue;
      has_predecessor = order.clock[x][u] >= first_in_v[u];
    }
    if (!has_predecessor) initials.push_back(steps[x].thread);
  }
  for (const std::uint64_t q : initials) {
    if (contains(at.backtrack, q) || asleep(at.sleep, q)) return;
  }
  // Prefer the racing thread itself (the plain reversal), else the first initial.
  std::uint64_t q = initials.front();
  if (contains(initials, steps[r.second].thread)) q = steps[r.second].thread;
  const auto option = std::find(at.threads.begin(), at.threads.end(), q);
  const auto within_bound = [&](std::size_t i) {
    if (options.deviation_bound && at.deviates(static_cast<std::uint32_t>(i)) &&
        at.deviations + 1 > *options.deviation_bound) {
      return false;
    }
    return !options.preemption_bound || !is_preemption(at.subjects, at.subjects[i], at.last_actor) ||
           at.preemptions + 1 <= *options.preemption_bound;
  };
  if (option == at.threads.end()) {
    // Not runnable there after all (a wait the declarations do not show): run everything
    // runnable there instead, as Flanagan & Godefroid's DPOR does.
    for (std::size_t i = 0; i < at.threads.size(); ++i) {
      if (!contains(at.backtrack, at.threads[i]) && within_bound(i)) at.backtrack.push_back(at.threads[i]);
    }
    // Parked behind its strand's running actor, as a thread waits on a lock its racer holds:
    // the reversed order starts where that actor's turn began, the last decision at which q
    // could still run (Flanagan & Godefroid backtrack to the lock's last acquire).
    if (contains(at.parked, q)) start_before_turn(path, at_index, q, options, result);
    return;
  }
  if (!within_bound(static_cast<std::size_t>(option - at.threads.begin()))) {
    ++result.beyond_bound;
    return;
  }
  at.backtrack.push_back(q);
}

// The trace-class digest of a run's first `steps` steps, built step by step: per object,
// the chain of its accesses, where consecutive reads (or consecutive updates) form one
// unordered block and a write is a block of its own; per thread, its steps' own decisions;
// virtual time as an object every step reads and every fence writes.
class trace_class_builder {
 public:
  void add_step(const step_record& s, std::uint64_t own_decisions) {
    const std::uint64_t label = mix(s.thread, ++ordinals_[s.thread]);
    if (s.after_fence) write(time_object, mix(0xfe11ce, ++fences_));
    join_block(time_object, label, access::read);
    std::uint64_t& thread = threads_[s.thread];
    total_ -= mix(s.thread, thread);
    thread = mix(thread, mix(label, own_decisions));
    total_ += mix(s.thread, thread);
    for (const object_access& a : s.accesses) {
      if (a.mode == access::write) {
        write(a.object, label);
      } else {
        join_block(a.object, label, a.mode);
      }
    }
  }
  std::uint64_t value() const { return total_; }

 private:
  static constexpr std::uint64_t time_object = ~std::uint64_t{0};
  struct history {
    std::uint64_t chain = 0;       // the closed blocks, in order
    std::uint64_t block = 0;       // the open block of reads or updates: a commutative sum
    access block_mode = access::write;  // write: no open block
  };
  std::uint64_t term(std::uint64_t object, const history& h) const {
    return mix(object, mix(h.chain, mix(h.block, static_cast<std::uint64_t>(h.block_mode))));
  }
  static void close_block(history& h) {
    if (h.block_mode != access::write) h.chain = mix(h.chain, mix(h.block, static_cast<std::uint64_t>(h.block_mode)));
    h.block = 0;
    h.block_mode = access::write;
  }
  void write(std::uint64_t object, std::uint64_t label) {
    history& h = objects_[object];
    total_ -= term(object, h);
    close_block(h);
    h.chain = mix(h.chain, label);
    total_ += term(object, h);
  }
  void join_block(std::uint64_t object, std::uint64_t label, access mode) {
    history& h = objects_[object];
    total_ -= term(object, h);
    if (h.block_mode != mode) close_block(h);
    h.block_mode = mode;
    h.block += mix(label, 0x4ead);
    total_ += term(object, h);
  }

  std::unordered_map<std::uint64_t, std::uint64_t> ordinals_;
  std::unordered_map<std::uint64_t, std::uint64_t> threads_;
  std::unordered_map<std::uint64_t, history> objects_;
  std::uint64_t fences_ = 0;
  std::uint64_t total_ = 0;
};

// Per step: a digest of the fault and data decisions taken inside it.
std::vector<std::uint64_t> own_decisions(const world& w, std::size_t steps) {
  std::vector<std::uint64_t> own(steps, 0);
  std::size_t step = 0;
  for (const decision& d : w.decisions()) {
    if (d.kind == decision_kind::schedule) {
      ++step;
      continue;
    }
    if (step == 0 || step > steps) continue;
    own[step - 1] = mix(own[step - 1], mix(d.subject, (std::uint64_t{d.chosen} << 8) | static_cast<std::uint8_t>(d.kind)));
  }
  return own;
}

// Moves the deepest decision with work left to its next option, dropping those below it;
// false when none is left.
bool backtrack(std::vector<node>& path) {
  while (!path.empty()) {
    node& n = path.back();
    if (n.kind == decision_kind::schedule) {
      for (std::uint32_t i = 0; i < n.options; ++i) {
        const std::uint64_t t = n.threads[i];
        if (!contains(n.backtrack, t) || contains(n.explored, t) || asleep(n.sleep, t)) continue;
        n.done.push_back(sleeper{n.chosen_thread(), std::move(n.chosen_footprint)});
        n.chosen_footprint = {};
        n.chosen = i;
        n.explored.push_back(t);
        return true;
      }
    } else {
      const auto untried = std::find(n.tried.begin(), n.tried.end(), false);
      if (untried != n.tried.end()) {
        n.chosen = static_cast<std::uint32_t>(untried - n.tried.begin());
        *untried = true;
        return true;
      }
    }
    path.pop_back();
  }
  return false;
}

// After a run: every schedule decision's step footprint (the last one's included), and, under
// dpor, each race of the run reversed at the decision of its first step.
void plan_reversals(std::vector<node>& path, const std::vector<step_record>& steps,
                    const dpor_options& options, dpor_result& result) {
  std::map<std::uint64_t, std::size_t> node_of_step;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i].kind != decision_kind::schedule) continue;
    node_of_step[path[i].step] = i;
    if (path[i].step >= 1 && path[i].step <= steps.size()) {
      merge_into(path[i].chosen_footprint, steps[path[i].step - 1].accesses);
    }
  }
  if (options.mode != reduction::dpor) return;
  std::vector<race> races;
  const run_order order = order_steps(steps, &races);
  for (const race& r : races) {
    const auto at = node_of_step.find(r.first + 1);
    if (at == node_of_step.end()) continue;  // before the first decision: none
    reverse_race(r, order, steps, path, at->second, options, result);
  }
}

}  // namespace

std::uint64_t trace_class_digest(const world& w) {
  const std::vector<std::uint64_t> prefixes = prefix_class_digests(w);
  return prefixes.empty() ? trace_class_builder{}.value() : prefixes.back();
}

std::vector<std::uint64_t> prefix_class_digests(const world& w) {
  const std::vector<step_record>& steps = w.steps_touched().steps();
  const std::vector<std::uint64_t> own = own_decisions(w, steps.size());
  trace_class_builder builder;
  std::vector<std::uint64_t> prefixes;
  prefixes.reserve(steps.size());
  for (std::size_t k = 0; k < steps.size(); ++k) {
    builder.add_step(steps[k], own[k]);
    prefixes.push_back(builder.value());
  }
  return prefixes;
}

dpor_result dpor_search(const dpor_run_fn& run_once, const dpor_options& options,
                        const std::function<bool()>& stop) {
  dpor_result result;
  std::vector<node> path;
  std::size_t prefix = 0;  // decisions of `path` the next run replays
  std::unordered_set<std::uint64_t> states;
  for (;;) {
    if (result.runs >= options.max_runs || (stop && stop())) break;
    dpor_chooser chooser(path, prefix, options, result);
    bool inspected = false;
    std::optional<finding> found;
    std::vector<decision> decisions;
    run_once(chooser, [&](const world& w) {
      inspected = true;
      if (chooser.diverged()) return;
      const std::vector<step_record>& steps = w.steps_touched().steps();
      result.decisions_max = std::max<std::uint64_t>(result.decisions_max, w.decisions().size());
      plan_reversals(path, steps, options, result);
      // Distinct states: every new step's prefix, as a trace class.
      const std::vector<std::uint64_t> own = own_decisions(w, steps.size());
      // The first step this run added: the one holding the decision it changed.
      std::uint64_t first_new_step = 1;
      for (std::size_t i = std::min(prefix, path.size()); i-- > 0;) {
        if (path[i].kind == decision_kind::schedule) {
          first_new_step = path[i].step;
          break;
        }
      }
      trace_class_builder builder;
      for (std::size_t k = 0; k < steps.size(); ++k) {
        builder.add_step(steps[k], own[k]);
        if (k + 1 >= first_new_step && states.size() < distinct_states_counted) {
          states.insert(builder.value());
        }
      }
      if (chooser.abandoned()) return;
      result.terminal_digests.insert(w.terminal_digest());
      found = w.found();
      if (options.collect_trace_classes && !found) result.trace_classes.insert(builder.value());
      if (found) {
        result.finding_invariants.insert(found->invariant);
        if (!result.first_finding) decisions = w.decisions();
      }
    });
    ++result.runs;
    KVSIM_SIM_ASSERT(inspected, "a dpor run function must call inspect on its finished world");
    if (chooser.diverged()) {
      result.nondeterminism = chooser.diverged();
      break;
    }
    if (found) {
      ++result.findings;
      if (!result.first_finding) {
        result.first_finding = std::move(found);
        result.first_finding_decisions = std::move(decisions);
        result.first_finding_run = result.runs;
      }
      if (options.stop_at_first_finding) break;
    }
    if (!backtrack(path)) {
      result.exhausted = true;
      break;
    }
    prefix = path.size();
  }
  result.distinct_states = states.size();
  return result;
}

}  // namespace kvsim::sim
