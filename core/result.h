#pragma once
// A value or the reason there is none. The core reports misuse as data, never by throwing:
// in the simulator a misuse is a finding that must be recorded, and on a production host an
// exception across the scheduler loop would take the rank down with pages still owned.
#include <cstdlib>
#include <utility>
#include <variant>

namespace kvsim::core {

// The value of a successful operation that has nothing else to say.
struct done {
  friend bool operator==(done, done) = default;
};

template <class T, class E>
class [[nodiscard]] result {
 public:
  result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  result(E error) : state_(std::in_place_index<1>, error) {}             // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Reading the wrong alternative is a bug in the caller; fail loudly rather than guess.
  const T& value() const {
    if (!ok()) std::abort();
    return std::get<0>(state_);
  }
  E error() const {
    if (ok()) std::abort();
    return std::get<1>(state_);
  }

 private:
  std::variant<T, E> state_;
};

template <class E>
using status = result<done, E>;

}  // namespace kvsim::core
