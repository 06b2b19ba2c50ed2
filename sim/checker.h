#pragma once
// The checkers hook: after every step the world hands each new event to every registered
// checker that subscribed to its kind, in order; at quiescence (every actor returned) it asks
// them once more. A checker that returns a finding ends the run. The checkers themselves live
// in properties/.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "sim/sim_events.h"

namespace kvsim::sim {

struct finding {
  std::string invariant;  // "I1".."I9" of DOMAIN.md, or "deadlock", "livelock", "crash"
  std::string message;    // one line that names pages, requests, ranks and steps
  std::vector<std::size_t> evidence;  // indices into the run's event log
  std::vector<std::string> details;   // further lines, e.g. the wait-for graph

  friend bool operator==(const finding&, const finding&) = default;
};

// The kind of an event, as far as a checker's subscription goes: a core decision is its
// decision's kind (core_decided wraps most of a run's events, and most checkers read a few of
// its kinds), any other event the sim_event alternative it is. Kinds 0.. are core::event_body's
// alternatives, then sim_event_body's (core_decided's own slot among them stays unused).
namespace event_kind {

inline constexpr std::size_t core_count = std::variant_size_v<core::event_body>;
inline constexpr std::size_t count = core_count + std::variant_size_v<sim_event_body>;

template <class T, class Variant>
struct alternative_index;
template <class T, class... Alternatives>
struct alternative_index<T, std::variant<Alternatives...>> {
  static constexpr bool found = (std::is_same_v<T, Alternatives> || ...);
  static constexpr std::size_t value = [] {
    std::size_t i = 0;
    (void)((std::is_same_v<T, Alternatives> ? false : (++i, true)) && ...);
    return i;
  }();
};

// The kind number of event type T (a core decision or a sim_event alternative).
template <class T>
constexpr std::size_t of() {
  if constexpr (alternative_index<T, core::event_body>::found) {
    return alternative_index<T, core::event_body>::value;
  } else {
    static_assert(alternative_index<T, sim_event_body>::found, "not an event type");
    static_assert(!std::is_same_v<T, core_decided>, "a core decision has its own kind");
    return core_count + alternative_index<T, sim_event_body>::value;
  }
}

inline std::size_t of(const sim_event& e) {
  if (const auto* decided = std::get_if<core_decided>(&e.body)) return decided->what.body.index();
  return core_count + e.body.index();
}

}  // namespace event_kind

// The event kinds a checker reads. Every kind it leaves out must be one whose events would
// change nothing in it and never make it report: the world then skips the call.
class event_kinds {
 public:
  static event_kinds all() {
    event_kinds kinds;
    for (std::size_t kind = 0; kind < event_kind::count; ++kind) kinds.set(kind);
    return kinds;
  }
  // Event types of core::event_body or sim_event_body; core_decided stands for every core
  // decision.
  template <class... Events>
  static event_kinds of() {
    event_kinds kinds;
    (kinds.add<Events>(), ...);
    return kinds;
  }
  bool contains(std::size_t kind) const {
    return kind < event_kind::count && ((words_[kind / 64] >> (kind % 64)) & 1u) != 0;
  }
  // Calls f(kind) for every kind held, ascending: a cost per kind held, not per kind.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      for (std::uint64_t bits = words_[w]; bits != 0; bits &= bits - 1) {
        f(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      }
    }
  }
  event_kinds& operator|=(const event_kinds& other) {
    for (std::size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
    return *this;
  }
  friend event_kinds operator|(event_kinds a, const event_kinds& b) { return a |= b; }

  friend bool operator==(const event_kinds&, const event_kinds&) = default;

 private:
  template <class Event>
  void add() {
    if constexpr (std::is_same_v<Event, core_decided>) {
      for (std::size_t kind = 0; kind < event_kind::core_count; ++kind) set(kind);
    } else {
      set(event_kind::of<Event>());
    }
  }
  void set(std::size_t kind) { words_[kind / 64] |= std::uint64_t{1} << (kind % 64); }

  std::array<std::uint64_t, (event_kind::count + 63) / 64> words_{};
};

class checker {
 public:
  virtual ~checker() = default;
  virtual const char* name() const = 0;
  // What observe() is fed; asked once, when the checker is attached. Everything by default.
  virtual event_kinds subscriptions() const { return event_kinds::all(); }
  // Sees every event of its subscriptions exactly once, in order; `index` is its position in
  // the event log (the same whatever the subscriptions).
  virtual std::optional<finding> observe(const sim_event& e, std::size_t index) = 0;
  // Every actor returned: what must hold of the final state.
  virtual std::optional<finding> at_quiescence() { return std::nullopt; }
  // The run hit its step limit at virtual time `now_us`: a finding this checker can make from
  // the time alone (I9: a request past its due time), which then names the run's finding
  // instead of a bare livelock (the world adds its livelock evidence to the details).
  virtual std::optional<finding> at_step_limit(std::uint64_t /*step*/, std::uint64_t /*now_us*/) {
    return std::nullopt;
  }
  // The run stops without quiescence (deadlock, step limit): lines naming what this checker
  // still waits to see (I9: the requests not finished), evidence for the world's finding.
  virtual std::vector<std::string> still_open() const { return {}; }
};

}  // namespace kvsim::sim
