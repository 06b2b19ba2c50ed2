#include "sim/dfs.h"

#include <algorithm>
#include <map>
#include <utility>
#include <variant>

#include "sim/replay.h"
#include "sim/sim_assert.h"

namespace kvsim::sim {
namespace {

// Footprint tokens: what kind of thing in the high half, which one in the low half.
constexpr std::uint64_t rank_token = std::uint64_t{1} << 32;
constexpr std::uint64_t group_token = std::uint64_t{2} << 32;
// Spawning takes the world's next actor id; sending takes the network's next message id and
// the world's next delivery id. Two steps that take from the same counter leave different
// ids in either order, so they are dependent even on different ranks.
constexpr std::uint64_t actor_ids_token = std::uint64_t{3} << 32;
constexpr std::uint64_t message_ids_token = std::uint64_t{4} << 32;

constexpr std::uint64_t no_last_actor = ~std::uint64_t{0};

bool is_delivery(std::uint64_t subject) { return (subject & delivery_bit) != 0; }

// Adds what one event touched to its step's footprint.
class event_footprint {
 public:
  explicit event_footprint(const std::vector<actor_name>& names) : names_(names) {}

  void add(const sim_event& e, step_footprint& into) {
    into_ = &into;
    if (const auto* finished = std::get_if<actor_finished>(&e.body); finished && finished->cancelled) {
      return;  // teardown after the last decision: not part of any step
    }
    if (e.actor == no_actor || e.actor >= names_.size()) {
      // An event of the world itself. A message delivery only appends to the receiving
      // rank's mailbox and wakes its waiters (sim_network.cc): it touches that rank. Anything
      // else the world does touches nobody's rank in particular, so everybody's.
      if (const auto* delivered = std::get_if<message_delivered>(&e.body)) {
        rank(delivered->to);
      } else {
        into_->global = true;
      }
      return;
    }
    rank(names_[e.actor].rank);
    std::visit([this](const auto& body) { add_body(body); }, e.body);
  }

 private:
  void rank(core::rank_id r) { into_->add(rank_token | r); }

  void add_body(const core_decided& b) { rank(b.what.rank); }
  void add_body(const actor_started&) {}
  void add_body(const actor_finished&) {}
  void add_body(const collective_entered& b) {
    into_->add(group_token | b.group);
    rank(b.rank);
  }
  void add_body(const collective_left& b) {
    into_->add(group_token | b.group);
    rank(b.rank);
  }
  void add_body(const transfer_submitted& b) {
    transfers_[b.transfer] = {b.source_rank, b.destination_rank};
    rank(b.source_rank);
    rank(b.destination_rank);
  }
  void add_body(const transfer_page_copied& b) {
    rank(b.source_rank);
    rank(b.destination_rank);
  }
  void add_body(const transfer_ended& b) { transfer(b.transfer); }
  void add_body(const transfer_timed_out& b) { transfer(b.transfer); }
  void add_body(const page_written& b) { rank(b.rank); }
  void add_body(const page_read& b) { rank(b.rank); }
  void add_body(const storage_read_started& b) { rank(b.rank); }
  void add_body(const storage_page_written& b) { rank(b.rank); }
  void add_body(const storage_read_ended& b) { rank(b.rank); }
  void add_body(const message_sent& b) {
    into_->add(message_ids_token);
    rank(b.from);
    rank(b.to);
  }
  void add_body(const message_delivered&) { into_->global = true; }
  void add_body(const message_dropped&) { into_->add(message_ids_token); }
  void add_body(const fault_fired&) {}  // the firing actor's own rank says enough
  void add_body(const gate_changed&) { into_->global = true; }
  void add_body(const failure_injected&) {}  // a record of the acting rank's own decision
  void add_body(const ledger_audited& b) { rank(b.rank); }
  void add_body(const core_audited& b) { rank(b.rank); }
  void add_body(const status_read& b) { rank(b.rank); }
  void add_body(const misuse_attempted& b) { rank(b.rank); }
  void add_body(const misuse_answered& b) { rank(b.rank); }
  void add_body(const ledger_created& b) { rank(b.rank); }
  void add_body(const lifetimes_created& b) { rank(b.rank); }
  void add_body(const status_written& b) { rank(b.rank); }
  void add_body(const room_table_read& b) { rank(b.rank); }
  void add_body(const ignored_call_attempted& b) { rank(b.rank); }
  void add_body(const engine_freed& b) { rank(b.rank); }
  void add_body(const deadlines_checked& b) { rank(b.rank); }
  void add_body(const ignored_call_answered& b) { rank(b.rank); }
  void add_body(const lifetime_misuse_attempted& b) { rank(b.rank); }
  void add_body(const lifetime_misuse_answered& b) { rank(b.rank); }
  // An event kind this list does not know yet: assume it touches everything.
  template <class other_event>
  void add_body(const other_event&) {
    into_->global = true;
  }

  void transfer(transfer_id id) {
    const auto it = transfers_.find(id);
    if (it == transfers_.end()) {
      into_->global = true;
      return;
    }
    rank(it->second.first);
    rank(it->second.second);
  }

  const std::vector<actor_name>& names_;
  step_footprint* into_ = nullptr;  // the step of the event being added
  // Who a transfer connects, from its submission (a transfer's later events name only it).
  std::map<transfer_id, std::pair<core::rank_id, core::rank_id>> transfers_;
};

}  // namespace

void step_footprint::add(std::uint64_t token) {
  const auto at = std::lower_bound(touched.begin(), touched.end(), token);
  if (at == touched.end() || *at != token) touched.insert(at, token);
}

void step_footprint::merge(const step_footprint& other) {
  global = global || other.global;
  for (const std::uint64_t token : other.touched) add(token);
}

bool step_footprint::conflicts_with(const step_footprint& other) const {
  if (global || other.global) return true;
  auto a = touched.begin();
  auto b = other.touched.begin();
  while (a != touched.end() && b != other.touched.end()) {
    if (*a == *b) return true;
    if (*a < *b) {
      ++a;
    } else {
      ++b;
    }
  }
  return false;
}

std::vector<step_footprint> step_footprints(const world& w) {
  const std::vector<actor_name>& names = w.actor_names();
  std::vector<step_footprint> steps;
  std::vector<bool> silent_delivery;  // per step: a delivery that has emitted nothing (yet)
  for (const decision& d : w.decisions()) {
    if (d.kind != decision_kind::schedule) continue;
    step_footprint f;
    const bool delivery = is_delivery(d.subject) || d.subject >= names.size();
    // An actor always touches its own rank: scenario state of a rank (its mailbox, its
    // queues, its flags) changes without events. A delivery touches what its events name.
    if (!delivery) f.add(rank_token | names[d.subject].rank);
    steps.push_back(std::move(f));
    silent_delivery.push_back(delivery);
  }
  event_footprint events(names);
  for (const sim_event& e : w.events()) {
    // Events carry the number of schedule decisions taken before them: step j + 1 is the
    // one chosen by decision j. Step 0 (before the first decision) belongs to no step.
    if (e.step == 0 || e.step > steps.size()) continue;
    events.add(e, steps[e.step - 1]);
    silent_delivery[e.step - 1] = false;
  }
  // A delivery that says nothing of what it did may have done anything.
  for (std::size_t j = 0; j < steps.size(); ++j) {
    if (silent_delivery[j]) steps[j].global = true;
  }
  return steps;
}

namespace {

struct sleeper {
  std::uint64_t subject = 0;
  step_footprint footprint;  // of its step where it was explored
};

bool sleeps(const std::vector<sleeper>& set, std::uint64_t subject) {
  return std::any_of(set.begin(), set.end(),
                     [subject](const sleeper& s) { return s.subject == subject; });
}

// One decision on the current path of the search.
struct node {
  decision_kind kind = decision_kind::schedule;
  std::uint32_t options = 0;
  std::uint64_t tag = 0;
  std::vector<std::uint64_t> subjects;  // schedule: the options' ids
  std::uint32_t chosen = 0;
  std::vector<bool> tried;  // per option: explored or being explored, asleep, beyond the bound

  // Schedule decisions only.
  std::size_t ordinal = 0;          // schedule decisions before this one
  std::vector<sleeper> sleep;       // asleep on arrival here
  std::vector<sleeper> done;        // explored here before `chosen`
  step_footprint chosen_footprint;  // `chosen`'s step, over every run below it so far
  bool chosen_asleep = false;       // a run took `chosen` before it was known asleep

  decision recorded() const {
    return decision{kind, options, chosen, kind == decision_kind::schedule ? subjects[chosen] : tag};
  }
};

bool is_preemption(const std::vector<std::uint64_t>& subjects, std::uint64_t subject,
                   std::uint64_t last_actor) {
  if (is_delivery(subject) || last_actor == no_last_actor || subject == last_actor) return false;
  return std::find(subjects.begin(), subjects.end(), last_actor) != subjects.end();
}

// The strategy of one run: replays the path's first `prefix` decisions, then takes the first
// allowed option at each new decision and appends it to the path.
class dfs_chooser final : public strategy {
 public:
  dfs_chooser(std::vector<node>& path, std::size_t prefix, const dfs_options& options,
              std::vector<std::uint64_t> maybe_asleep, dfs_result& result)
      : path_(path),
        prefix_(prefix),
        options_(options),
        maybe_asleep_(std::move(maybe_asleep)),
        result_(result) {}

  std::string name() const override { return "dfs"; }

  std::uint32_t choose(const decision_request& request) override {
    if (divergence_) return 0;  // the world stops at its next schedule decision
    const std::uint64_t index = next_++;
    if (index < prefix_) return replay_choice(index, request);
    return new_choice(request);
  }

  void on_run_end(std::uint64_t decisions_taken) override {
    if (!divergence_ && decisions_taken < prefix_) {
      divergence_ = divergence{decisions_taken, describe(path_[decisions_taken].recorded()),
                               "the run ended after " + std::to_string(decisions_taken) +
                                   " decisions"};
    }
  }

 private:
  std::uint32_t replay_choice(std::uint64_t index, const decision_request& request) {
    const node& n = path_[index];
    const bool same =
        n.kind == request.kind && n.options == request.options &&
        (n.kind == decision_kind::schedule
             ? std::equal(n.subjects.begin(), n.subjects.end(), request.subjects.begin(),
                          request.subjects.end())
             : n.tag == request.tag);
    if (!same) {
      divergence_ = divergence{index, describe(n.recorded()), describe(request)};
      return 0;
    }
    if (n.kind == decision_kind::schedule) ran(n.subjects, n.subjects[n.chosen]);
    return n.chosen;
  }

  std::uint32_t new_choice(const decision_request& request) {
    node n;
    n.kind = request.kind;
    n.options = request.options;
    n.tag = request.tag;
    n.tried.assign(request.options, false);
    if (request.kind == decision_kind::schedule) {
      n.subjects.assign(request.subjects.begin(), request.subjects.end());
      n.ordinal = ordinal_;
      std::optional<std::uint32_t> first;
      std::optional<std::uint32_t> first_awake;
      for (std::uint32_t i = 0; i < n.options; ++i) {
        const bool preempts = is_preemption(n.subjects, n.subjects[i], last_actor_);
        if (options_.preemption_bound && preempts && preemptions_ + 1 > *options_.preemption_bound) {
          n.tried[i] = true;
          ++result_.beyond_bound;
          continue;
        }
        if (!first) first = i;
        const bool maybe_asleep = std::find(maybe_asleep_.begin(), maybe_asleep_.end(),
                                            n.subjects[i]) != maybe_asleep_.end();
        if (!first_awake && !maybe_asleep) first_awake = i;
      }
      // Continuing the last actor is never a preemption, and when it cannot continue no
      // choice is one: some option is always within the bound.
      KVSIM_SIM_ASSERT(first.has_value(), "no schedule option within the preemption bound");
      // Prefer an option that cannot be asleep: one taken asleep wastes the rest of the run.
      n.chosen = first_awake.value_or(*first);
      std::erase(maybe_asleep_, n.subjects[n.chosen]);
      ran(n.subjects, n.subjects[n.chosen]);
    } else if (request.kind == decision_kind::fault && request.fault_per_million == 0) {
      for (std::uint32_t i = 1; i < n.options; ++i) n.tried[i] = true;  // cannot fire
    }
    n.tried[n.chosen] = true;
    const std::uint32_t chosen = n.chosen;
    path_.push_back(std::move(n));
    return chosen;
  }

  // Keeps the preemption count along the run (see dfs.h for what counts).
  void ran(const std::vector<std::uint64_t>& subjects, std::uint64_t subject) {
    if (!is_delivery(subject)) {
      if (is_preemption(subjects, subject, last_actor_)) ++preemptions_;
      last_actor_ = subject;
    }
    ++ordinal_;
  }

  std::vector<node>& path_;
  std::size_t prefix_;
  const dfs_options& options_;
  // Subjects that may be asleep at new decisions: the sleep set the last replayed schedule
  // decision passes on holds at most these (a subject that runs leaves it).
  std::vector<std::uint64_t> maybe_asleep_;
  dfs_result& result_;
  std::uint64_t next_ = 0;
  std::size_t ordinal_ = 0;
  std::uint64_t last_actor_ = no_last_actor;
  std::uint32_t preemptions_ = 0;
};

// The sleep set that schedule decision `from` passes to the next schedule decision when its
// chosen step had footprint `step`: what slept there or was explored there before, minus what
// that step depends on (Godefroid 1996).
std::vector<sleeper> passed_on(const node& from, const step_footprint& step) {
  std::vector<sleeper> sleep;
  const std::uint64_t taken = from.subjects[from.chosen];
  for (const std::vector<sleeper>* set : {&from.sleep, &from.done}) {
    for (const sleeper& s : *set) {
      if (s.subject != taken && !s.footprint.conflicts_with(step)) sleep.push_back(s);
    }
  }
  return sleep;
}

std::vector<std::uint64_t> maybe_asleep(const std::vector<node>& path, std::size_t prefix) {
  for (std::size_t i = prefix; i-- > 0;) {
    const node& n = path[i];
    if (n.kind != decision_kind::schedule) continue;
    std::vector<std::uint64_t> subjects;
    const std::uint64_t taken = n.subjects[n.chosen];
    for (const std::vector<sleeper>* set : {&n.sleep, &n.done}) {
      for (const sleeper& s : *set) {
        if (s.subject != taken) subjects.push_back(s.subject);
      }
    }
    return subjects;
  }
  return {};
}

// A step after which the next schedule decision offers an actor id never offered before
// spawned it (ids ascend, and a new actor is ready at once).
void add_spawns(const std::vector<node>& path, std::vector<step_footprint>& footprints) {
  std::optional<std::uint64_t> highest;
  for (const node& n : path) {
    if (n.kind != decision_kind::schedule) continue;
    for (const std::uint64_t subject : n.subjects) {
      if (is_delivery(subject)) continue;
      if (highest && subject > *highest && n.ordinal > 0 && n.ordinal <= footprints.size()) {
        footprints[n.ordinal - 1].add(actor_ids_token);
      }
      if (!highest || subject > *highest) highest = subject;
    }
  }
}

// Settles the sleep sets of the decisions the last run added (from `prefix` on), now that
// its steps' footprints are known. A decision whose chosen option turns out asleep ends the
// path there: the run was redundant from that decision on.
void settle_sleep_sets(std::vector<node>& path, std::size_t prefix,
                       const std::vector<step_footprint>& footprints, dfs_result& result) {
  std::optional<std::size_t> previous;  // the last schedule decision before the current one
  for (std::size_t i = 0; i < path.size(); ++i) {
    node& n = path[i];
    if (n.kind != decision_kind::schedule) continue;
    if (i >= prefix && previous) {
      const node& from = path[*previous];
      n.sleep = passed_on(from, footprints.at(from.ordinal));
      for (std::uint32_t o = 0; o < n.options; ++o) {
        if (!sleeps(n.sleep, n.subjects[o])) continue;
        if (o == n.chosen) {
          n.chosen_asleep = true;
          ++result.pruned;
        } else if (!n.tried[o]) {
          n.tried[o] = true;
          ++result.pruned;
        }
      }
      if (n.chosen_asleep) {
        path.resize(i + 1);
        ++result.sleep_blocked;
        return;
      }
    }
    previous = i;
  }
}

// Moves the deepest decision with an untried option to that option, dropping exhausted
// decisions below it; false when none is left.
bool backtrack(std::vector<node>& path) {
  while (!path.empty()) {
    node& n = path.back();
    const auto untried = std::find(n.tried.begin(), n.tried.end(), false);
    if (untried != n.tried.end()) {
      if (n.kind == decision_kind::schedule) {
        if (!n.chosen_asleep) n.done.push_back({n.subjects[n.chosen], std::move(n.chosen_footprint)});
        n.chosen_footprint = {};
        n.chosen_asleep = false;
      }
      n.chosen = static_cast<std::uint32_t>(untried - n.tried.begin());
      *untried = true;
      return true;
    }
    path.pop_back();
  }
  return false;
}

}  // namespace

dfs_result dfs_search(const dfs_run_fn& run_once, const dfs_options& options,
                      const std::function<bool()>& stop) {
  dfs_result result;
  std::vector<node> path;
  std::size_t prefix = 0;  // decisions of `path` the next run replays
  for (;;) {
    if (result.runs >= options.max_runs || (stop && stop())) return result;
    dfs_chooser chooser(path, prefix, options,
                        options.sleep_sets ? maybe_asleep(path, prefix) : std::vector<std::uint64_t>{},
                        result);
    bool inspected = false;
    std::vector<step_footprint> footprints;
    std::optional<finding> found;
    std::vector<decision> decisions;
    run_once(chooser, [&](const world& w) {
      inspected = true;
      footprints = step_footprints(w);
      found = w.found();
      result.decisions_max = std::max<std::uint64_t>(result.decisions_max, w.decisions().size());
      if (found && !result.first_finding) decisions = w.decisions();
    });
    ++result.runs;
    KVSIM_SIM_ASSERT(inspected, "a dfs run function must call inspect on its finished world");
    if (chooser.diverged()) {
      result.nondeterminism = chooser.diverged();
      return result;
    }

    add_spawns(path, footprints);
    for (node& n : path) {
      if (n.kind == decision_kind::schedule && n.ordinal < footprints.size()) {
        n.chosen_footprint.merge(footprints[n.ordinal]);
      }
    }
    if (options.sleep_sets) settle_sleep_sets(path, prefix, footprints, result);

    if (found) {
      ++result.findings;
      if (!result.first_finding) {
        result.first_finding = std::move(found);
        result.first_finding_decisions = std::move(decisions);
        result.first_finding_run = result.runs;
      }
      if (options.stop_at_first_finding) return result;
    }
    if (!backtrack(path)) {
      result.exhausted = true;
      return result;
    }
    prefix = path.size();
  }
}

}  // namespace kvsim::sim
