#include "real_backend/scripts/transfer_prefill.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "real_backend/scripts/chunk_slices.h"
#include "real_backend/host/thread_identity.h"

namespace kvsim::real {
namespace {

constexpr std::uint32_t tombstones_max = 64;

}  // namespace

prefill_actor::prefill_actor(transfer_context& context, tcp_messenger& wire,
                             gated_transfer_engine& engine)
    : context_(context),
      engine_(engine),
      checked_(*this),
      net_(wire, context.wire),
      core_(prefill_rank, {checked_, net_, context.log},
            core::link_keyring(prefill_rank, derive_token_key(context.secret), {decode_rank}),
            core::prefill_rank_options{.pages_total = context.spec.topology.pages_per_rank,
                                       .order = core::allocation_order::lifo,
                                       .tombstones_max = tombstones_max,
                                       .v = context.variant}),
      requests_(context.spec.requests.size()) {
  // Built on the owner thread, which owns the sender from here on.
  sender_.bind_owner(host_threads());
}

// --- the event loop ----------------------------------------------------------------------
void prefill_actor::step() {
  std::int64_t handled = 0;
  while (auto message = net_.try_receive()) {
    ++handled;
    if (message->kind == core::control_kind::metadata) {
      metadata_[message->key][message->from] = message->pages;
    } else if (message->kind == core::control_kind::abort) {
      aborts_seen_.insert(message->key);
      sender_.on_abort(*message);
    }
  }
  sender_.poll();  // checks what ended (checked_engine)
  for (std::size_t r = 0; r < requests_.size(); ++r) post_if_done(r);
  // Last: whatever these messages caused is done, and whatever it sent is counted.
  context_.wire.handled(handled);
}

// Once the request's chunks are sent and have ended, prefill finishes it; the sender itself
// tells decode how it ended (chunk_ready or a failed status, it was opened with the decode
// rank) and its poll sends any drain-ACK still owed.
void prefill_actor::post_if_done(std::size_t r) {
  request& st = requests_[r];
  const core::room_key key = context_.keys[r];
  if (!st.started || !st.opened || !st.chunks_sent || st.posted || sender_.in_flight(key)) return;
  if (st.held) {
    st.held = false;  // its late transfer has ended
  } else if (any_held_in_flight()) {
    // This request's data has landed (and was checked): the adversarial moment for a held
    // transfer to resume, before decode hears that this request is complete.
    open_held_gates();
    return;
  }
  sender_.finish(key);
  st.posted = true;
}

bool prefill_actor::any_held_in_flight() const {
  for (std::size_t r = 0; r < requests_.size(); ++r) {
    if (requests_[r].held && sender_.in_flight(context_.keys[r])) return true;
  }
  return false;
}

// --- the script's steps ------------------------------------------------------------------
bool prefill_actor::open_request(std::size_t r) {
  const core::room_key key = context_.keys[r];
  request& st = requests_[r];
  auto allocated = ledger_.allocate(key, context_.spec.requests[r].pages);
  if (!allocated) return false;  // the pool is full: tried again after the next step
  st.source = allocated.value();
  for (std::uint32_t j = 0; j < st.source.size(); ++j) {
    context_.prefill_pages->write_canary(st.source[j], key, j);
  }
  st.started = true;
  const std::array<core::rank_id, 1> waiting{decode_rank};
  st.opened = sender_.open(key, st.source, waiting);
  if (!st.opened) {
    (void)ledger_.release_all(key);
    st.posted = true;
  }
  return true;
}

bool prefill_actor::send_when_published(std::size_t r) {
  if (!requests_[r].opened) return true;  // refused at open: nothing to send
  const core::room_key key = context_.keys[r];
  if (!metadata_[key].contains(decode_rank) && !lifetimes_.is_closed(key)) return false;
  send_chunks(r);
  return true;
}

void prefill_actor::send_chunks(std::size_t r) {
  const core::room_key key = context_.keys[r];
  const scenarios::request_spec& req = context_.spec.requests[r];
  request& st = requests_[r];
  st.chunks_sent = true;
  const auto it = metadata_[key].find(decode_rank);
  if (it == metadata_[key].end()) return;  // closed before the metadata came
  // Decode's page list came off the wire: slice_chunks refuses one of the wrong length.
  for (const chunk_slice& chunk : slice_chunks(key, st.source, it->second, req.chunks)) {
    if (!sender_.send_chunk(key, decode_rank, chunk.source, chunk.destination, req.siblings)) {
      return;  // closed
    }
  }
}

bool prefill_actor::check_at_gate(std::size_t gate) {
  hold_gate& g = *context_.gates.at(gate);
  if (!g.reached()) return false;
  // The pages before the gate have landed now, while decode still owns them.
  for (const held_transfer& h : engine_.held_at(g)) check_landed(h.request, 0, h.before_page);
  return true;
}

void prefill_actor::hold(std::size_t r) { requests_[r].held = true; }

bool prefill_actor::saw_abort(std::size_t r) const {
  return aborts_seen_.contains(context_.keys[r]);
}

void prefill_actor::open_held_gates() {
  for (std::size_t g = 0; g < context_.spec.faults.gates.size(); ++g) {
    if (requests_[context_.spec.faults.gates[g].request].held) context_.gates[g]->open();
  }
}

bool prefill_actor::over(std::size_t r) const {
  return requests_[r].posted && !sender_.in_flight(context_.keys[r]);
}

bool prefill_actor::all_over() const {
  for (std::size_t r = 0; r < requests_.size(); ++r) {
    if (!requests_[r].posted || sender_.tracking(context_.keys[r])) return false;
  }
  return true;
}

// --- the landing check -------------------------------------------------------------------
core::transfer_handle prefill_actor::checked_engine::submit(const core::transfer_request& request) {
  if (actor_.context_.copies.submitted(request.owner)) {
    actor_.context_.findings.add("I2: rank " + std::to_string(prefill_rank) +
                                 " sent the drain-ACK for " + core::to_string(request.owner) +
                                 " while the room was still open (a copy of it was submitted "
                                 "afterwards)");
  }
  return actor_.engine_.submit(request);
}

core::transfer_poll prefill_actor::checked_engine::poll(core::transfer_handle handle) {
  const core::transfer_poll answer = actor_.engine_.poll(handle);
  actor_.check_ended();
  return answer;
}

bool prefill_actor::checked_engine::cancel(core::transfer_handle handle) {
  const bool cancelled = actor_.engine_.cancel(handle);
  actor_.check_ended();
  return cancelled;
}

void prefill_actor::check_ended() {
  for (const ended_transfer& e : engine_.take_ended()) {
    check_landed(e.request, e.first_unconfirmed_page,
                 static_cast<std::uint32_t>(e.request.source_pages.size()));
    context_.copies.ended(e.request.owner);
  }
}

std::uint32_t prefill_actor::logical_of(const core::transfer_request& t, std::size_t i) const {
  for (std::size_t r = 0; r < context_.keys.size(); ++r) {
    if (context_.keys[r] != t.owner) continue;
    const auto& source = requests_[r].source;
    const auto it = std::find(source.begin(), source.end(), t.source_pages[i]);
    return static_cast<std::uint32_t>(it - source.begin());
  }
  return static_cast<std::uint32_t>(i);
}

// Pages [from, to) of `t` have landed: read from source pages their owner still held, into
// destination pages their owner still holds, with its bytes.
void prefill_actor::check_landed(const core::transfer_request& t, std::uint32_t from,
                                 std::uint32_t to) {
  const std::string& where = context_.plane_text;
  for (std::uint32_t i = from; i < to && i < t.destination_pages.size(); ++i) {
    const core::page_index source = t.source_pages[i];
    if (const std::optional<core::room_key> holder = ledger_.owner_of(source); holder != t.owner) {
      context_.findings.add(
          "I1: a transfer of " + core::to_string(t.owner) + " read source page " +
          std::to_string(source) + " on rank " + std::to_string(prefill_rank) + " after rank " +
          std::to_string(prefill_rank) +
          (holder ? " had given it to " + core::to_string(*holder) : std::string(" had freed it")));
    }
    const core::page_index page = t.destination_pages[i];
    const std::uint32_t logical = logical_of(t, i);
    const std::optional<core::room_key> holder = context_.decode_owners.owner_of(page);
    const page_check c = context_.decode_pages.verify(page, t.owner, logical);
    if (holder == t.owner) {
      if (!c.intact) {
        context_.findings.add("I7: a transfer of " + core::to_string(t.owner) + " landed in page " +
                              std::to_string(page) + " on rank " + std::to_string(decode_rank) +
                              ", which does not hold its bytes (logical page " +
                              std::to_string(logical) + ") afterwards");
      }
      continue;
    }
    context_.findings.add(
        "I1: a transfer of " + core::to_string(t.owner) + " wrote destination page " +
        std::to_string(page) + " on rank " + std::to_string(decode_rank) + " after " +
        (holder ? "rank " + std::to_string(decode_rank) + " had given it to " +
                      core::to_string(*holder)
                : std::string("rank ") + std::to_string(decode_rank) + " had freed it") +
        (c.intact ? "; the page holds " + core::to_string(t.owner) + "'s bytes (logical page " +
                        std::to_string(logical) + "), read back from " + where
                  : std::string("")));
  }
}

}  // namespace kvsim::real
