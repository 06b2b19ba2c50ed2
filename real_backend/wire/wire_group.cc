#include "real_backend/wire/wire_group.h"

#include <algorithm>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

// The longest a waiting member sleeps on the wire before it looks at the clock again.
constexpr std::chrono::milliseconds look_interval{50};

}  // namespace

wire_group::wire_group(std::uint32_t id, std::vector<core::rank_id> members, tcp_messenger& wire,
                       std::chrono::milliseconds patience)
    : wire_(wire),
      patience_(patience),
      books_(id, std::move(members)),
      self_(books_.index_of(wire.self())) {}

std::int64_t wire_group::all_reduce(std::int64_t value, core::reduce_op op) {
  return enter(op == core::reduce_op::min ? collective_kind::all_reduce_min
                                          : collective_kind::all_reduce_max,
               value);
}

void wire_group::barrier() { (void)enter(collective_kind::barrier, 0); }

std::int64_t wire_group::enter(collective_kind kind, std::int64_t value) {
  take(std::chrono::milliseconds(0));
  if (failure_) throw collective_divergence(*failure_);
  const std::uint64_t sequence = books_.enter(self_, kind, value);
  tell_peers({books_.group_id(), collective_say::entered, sequence, kind, value, {}}, false);
  const auto deadline = std::chrono::steady_clock::now() + patience_;
  for (;;) {
    if (failure_) throw collective_divergence(*failure_);
    if (auto mismatch = books_.mismatch(sequence)) fail(*mismatch, sequence, kind);
    if (books_.complete(sequence)) {
      const std::int64_t result = books_.combined(sequence);
      books_.forget(sequence);
      return kind == collective_kind::barrier ? 0 : result;
    }
    if (auto never = books_.never_completes(self_, sequence)) fail(*never, sequence, kind);
    check_links(sequence);
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) fail(books_.timed_out(self_, sequence, patience_), sequence, kind);
    take(std::min(look_interval,
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                      std::chrono::milliseconds(1)));
  }
}

void wire_group::finished() {
  const std::optional<collective_kind> last = books_.last_kind(self_);
  tell_peers({books_.group_id(),
              collective_say::finished,
              books_.entered(self_),
              last.value_or(collective_kind::all_reduce_min),
              0,
              {}},
             true);
  books_.finish(self_);
}

void wire_group::take(std::chrono::milliseconds timeout) {
  for (auto wait = timeout;; wait = std::chrono::milliseconds(0)) {
    const std::optional<collective_delivery> delivery = wire_.receive_collective_for(wait);
    if (!delivery) return;
    apply(*delivery);
  }
}

void wire_group::apply(const collective_delivery& delivery) {
  const std::uint32_t peer = books_.index_of(delivery.from);
  const std::string who = "rank " + std::to_string(delivery.from);
  const auto broken = [&](const std::string& why) {
    throw control_plane_error("control plane: " + who +
                              " broke the collective protocol of group g" +
                              std::to_string(books_.group_id()) + ": " + why);
  };
  if (!delivery.note) {
    closed_.insert(peer);
    return;
  }
  const collective_note& note = *delivery.note;
  if (peer == self_) broken("a note from this member's own rank");
  if (note.group != books_.group_id()) broken("a note of group g" + std::to_string(note.group));
  switch (note.say) {
    case collective_say::entered: {
      if (books_.finished(peer)) broken("it entered a collective after it said it had returned");
      const std::uint64_t sequence = books_.enter(peer, note.kind, note.value);
      if (sequence != note.sequence) {
        broken("its collective #" + std::to_string(note.sequence) + " came as its #" +
               std::to_string(sequence));
      }
      return;
    }
    case collective_say::finished:
      if (note.sequence != books_.entered(peer)) {
        broken("it said it returned after " + std::to_string(note.sequence) +
               " collectives, having entered " + std::to_string(books_.entered(peer)));
      }
      books_.finish(peer);
      return;
    case collective_say::diverged:
      if (!failure_) failure_ = note.line;
      return;
  }
}

void wire_group::check_links(std::uint64_t sequence) const {
  for (const std::uint32_t peer : closed_) {
    if (books_.finished(peer) || books_.entered(peer) >= sequence) continue;
    throw real_backend_error("rank " + std::to_string(books_.rank_of(peer)) +
                             " closed its link without returning, while rank " +
                             std::to_string(books_.rank_of(self_)) + " waits in collective #" +
                             std::to_string(sequence) + " of group g" +
                             std::to_string(books_.group_id()) + " (its process ended)");
  }
}

void wire_group::tell_peers(const collective_note& note, bool best_effort) {
  for (std::uint32_t k = 0; k < books_.size(); ++k) {
    if (k == self_) continue;
    try {
      wire_.send_collective(books_.rank_of(k), note);
    } catch (const control_plane_error&) {
      if (!best_effort) throw;  // a peer that has gone hears nothing more; the run reports why
    }
  }
}

void wire_group::fail(const std::string& finding, std::uint64_t sequence, collective_kind kind) {
  if (!failure_) {
    failure_ = finding;
    tell_peers({books_.group_id(), collective_say::diverged, sequence, kind, 0, finding}, true);
  }
  throw collective_divergence(*failure_);
}

}  // namespace kvsim::real
