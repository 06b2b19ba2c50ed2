#include "tools/bench/soak_driver.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>

#include "core/abort_token.h"
#include "core/decode_rank.h"
#include "core/decode_receiver.h"
#include "core/events.h"
#include "core/page_ledger.h"
#include "core/ports.h"
#include "core/prefill_rank.h"
#include "core/prefill_sender.h"
#include "core/room_lifetimes.h"
#include "core/transfer_status_table.h"
#include "core/variant.h"

namespace kvsim::tools::soak {

using namespace kvsim::core;

const char* to_string(request_kind kind) {
  switch (kind) {
    case request_kind::completes:
      return "completes";
    case request_kind::decode_abort:
      return "decode_abort";
    case request_kind::deadline_quarantine:
      return "deadline_quarantine";
    case request_kind::abort_before_open:
      return "abort_before_open";
    case request_kind::prefill_fail:
      return "prefill_fail";
    case request_kind::transfer_fails:
      return "transfer_fails";
    case request_kind::transfer_unconfirmed:
      return "transfer_unconfirmed";
  }
  return "?";
}

namespace {

constexpr rank_id prefill_rank = 0;
constexpr rank_id decode_rank = 1;
constexpr std::uint64_t tick_us = 1000;
constexpr std::uint64_t stuck_ticks = 100'000;

static_assert([] {
  std::uint32_t sum = 0;
  for (std::uint32_t bp : kind_mix_bp) sum += bp;
  return sum == 10'000;
}());

// splitmix64: the driver's only source of choices.
class splitmix {
 public:
  explicit splitmix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
  std::uint32_t between(std::uint32_t lo, std::uint32_t hi) { return lo + below(hi - lo + 1); }

 private:
  std::uint64_t state_;
};

template <class T, class V>
struct index_in;
template <class T, class... Ts>
struct index_in<T, std::variant<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool match[] = {std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i) {
      if (match[i]) return i;
    }
    return sizeof...(Ts);
  }();
};
template <class T>
constexpr std::size_t event_index = index_in<T, event_body>::value;

// ---- ports ---------------------------------------------------------------------------------

struct network {
  std::array<std::deque<control_message>, 2> inbox;  // by rank: 0 prefill, 1 decode
};

class queue_messenger final : public messenger {
 public:
  explicit queue_messenger(network& net) : net_(net) {}
  void send(rank_id to, const control_message& message) override {
    if (to >= net_.inbox.size())
      throw std::runtime_error("message to unknown rank " + std::to_string(to));
    net_.inbox[to].push_back(message);
  }
  // The driver delivers messages itself; the core never blocks on this port.
  control_message receive() override { throw std::runtime_error("the core called receive()"); }

 private:
  network& net_;
};

class manual_clock final : public core::clock {
 public:
  std::uint64_t now_us() const override { return now; }
  std::uint64_t now = 0;
};

class always_alive final : public peer_liveness {
 public:
  peer_state state(rank_id) const override { return peer_state::alive; }
};

// How one submitted transfer behaves: in flight for `in_flight_polls` polls, then
// timed_out_unconfirmed for `unconfirmed_polls` polls, then `end`.
struct transfer_plan {
  std::uint32_t in_flight_polls = 1;
  std::uint32_t unconfirmed_polls = 0;
  transfer_poll end = transfer_poll::succeeded;
};

class transfer_planner {
 public:
  virtual ~transfer_planner() = default;
  virtual transfer_plan plan(const transfer_request& request) = 0;
};

class scripted_transfers final : public transfer_engine {
 public:
  scripted_transfers(transfer_planner& planner, std::uint64_t& unknown_polls)
      : planner_(planner), unknown_polls_(unknown_polls) {
    running_.reserve(4096);
  }
  transfer_handle submit(const transfer_request& request) override {
    const transfer_handle handle = next_++;
    running_.emplace(handle, planner_.plan(request));
    return handle;
  }
  transfer_poll poll(transfer_handle handle) override {
    const auto it = running_.find(handle);
    if (it == running_.end()) {
      ++unknown_polls_;  // reported ended already: say so again
      return transfer_poll::succeeded;
    }
    transfer_plan& p = it->second;
    if (p.in_flight_polls > 0) {
      --p.in_flight_polls;
      return transfer_poll::in_flight;
    }
    if (p.unconfirmed_polls > 0) {
      --p.unconfirmed_polls;
      return transfer_poll::timed_out_unconfirmed;
    }
    const transfer_poll end = p.end;
    running_.erase(it);  // the driver's memory stays bounded: a terminal report is the last
    return end;
  }
  bool cancel(transfer_handle) override { return false; }
  std::size_t running() const { return running_.size(); }

 private:
  transfer_planner& planner_;
  std::uint64_t& unknown_polls_;
  std::unordered_map<transfer_handle, transfer_plan> running_;
  transfer_handle next_ = 1;
};

class finish_listener {
 public:
  virtual ~finish_listener() = default;
  virtual void on_request_finished(rank_id rank, room_key key) = 0;
};

// Counts every event and keeps none. request_finished is passed to the driver (it tells the
// driver a side is done with a request); nothing calls back into the core from here.
class counting_sink final : public event_sink {
 public:
  explicit counting_sink(finish_listener& listener) : listener_(listener) {}
  void emit(const event& e) override {
    ++total_;
    ++by_index_[e.body.index()];
    if (const auto* finished = std::get_if<request_finished>(&e.body)) {
      listener_.on_request_finished(e.rank, finished->key);
    } else if (const auto* released = std::get_if<request_pages_released>(&e.body)) {
      if (released->reason == release_reason::completed) {
        ++releases_completed;
      } else if (released->reason == release_reason::all_acks) {
        ++releases_after_acks;
      } else {
        ++releases_other;
      }
    } else if (const auto* expired = std::get_if<deadline_expired>(&e.body)) {
      if (expired->action == deadline_action::quarantined) ++deadline_quarantines;
    } else if (const auto* refused = std::get_if<lifetime_refused>(&e.body)) {
      if (refused->error == lifetime_error::tombstoned) ++late_opens_refused;
    }
  }
  template <class T>
  std::uint64_t count() const {
    return by_index_[event_index<T>];
  }
  std::uint64_t total() const { return total_; }

  std::uint64_t releases_completed = 0;
  std::uint64_t releases_after_acks = 0;
  std::uint64_t releases_other = 0;
  std::uint64_t deadline_quarantines = 0;
  std::uint64_t late_opens_refused = 0;

 private:
  finish_listener& listener_;
  std::uint64_t total_ = 0;
  std::array<std::uint64_t, std::variant_size_v<event_body> + 1> by_index_{};
};

// ======================================================================================
// CORE SETUP: the only place that constructs core objects. The core's API still changes
// before 1.0; when it does, adapt this function to what core/*.h says, and nothing else.
// ======================================================================================
struct core_ports {
  scripted_transfers& transfers;
  queue_messenger& prefill_control;
  queue_messenger& decode_control;
  manual_clock& time;
  always_alive& peers;
  counting_sink& events;
};

struct core_under_test {
  std::unique_ptr<core::prefill_rank> prefill_core;  // rank 0
  std::unique_ptr<core::decode_rank> decode_core;    // rank 1
  // Their parts, as the driver calls and reads them.
  page_ledger* prefill_ledger = nullptr;
  room_lifetimes* lifetimes = nullptr;
  transfer_status_table* statuses = nullptr;
  abort_token_verifier* prefill_tokens = nullptr;
  prefill_sender* prefill = nullptr;
  page_ledger* decode_ledger = nullptr;
  abort_token_verifier* decode_tokens = nullptr;
  decode_receiver* decode = nullptr;
};

core_under_test set_up_core(const core_ports& p, const soak_config& config) {
  cluster_key key;
  splitmix key_bytes(config.seed ^ 0x6b76'7369'6d5f'6b65ULL);
  for (auto& byte : key.bytes) byte = static_cast<std::uint8_t>(key_bytes.next());

  // Each rank's life, drawn at its start; the keys of their link are bound to both, as a
  // deployment that tells each rank its peers' lives builds them (core/link_keys.h).
  const std::uint64_t prefill_life = key_bytes.next() | 1;
  const std::uint64_t decode_life = key_bytes.next() | 1;

  core_under_test c;
  // Prefill's memory of a room's ABORTs lives as long as the room; the keys it retires with
  // the rooms are bounded by its capacity, sized here like the tombstone tables (as decode's).
  c.prefill_core = std::make_unique<core::prefill_rank>(
      prefill_rank, prefill_ports{p.transfers, p.prefill_control, p.events},
      link_keyring(prefill_rank, prefill_life, key, {{decode_rank, decode_life}}),
      prefill_rank_options{.pages_total = config.pages_per_rank,
                           .tombstones_max = config.tombstones_max,
                           .tokens_remembered_max = config.tombstones_max});
  c.decode_core = std::make_unique<core::decode_rank>(
      decode_rank, decode_ports{p.decode_control, p.time, p.events, p.peers},
      link_keyring(decode_rank, decode_life, key, {{prefill_rank, prefill_life}}),
      decode_rank_options{.pages_total = config.pages_per_rank,
                          .token_epoch = decode_life,
                          .tokens_remembered_max = config.tombstones_max});
  c.prefill_ledger = &c.prefill_core->ledger();
  c.lifetimes = &c.prefill_core->lifetimes();
  c.statuses = &c.prefill_core->statuses();
  c.prefill_tokens = &c.prefill_core->verifier();
  c.prefill = &c.prefill_core->sender();
  c.decode_ledger = &c.decode_core->ledger();
  c.decode_tokens = &c.decode_core->verifier();
  c.decode = &c.decode_core->receiver();
  return c;
}

// Books the core may or may not have today (its API is changing): read when present.
// Templates, so that a member that does not exist is skipped instead of failing the build.
template <class Lifetimes>
std::uint64_t tombstone_capacity(const Lifetimes& lifetimes) {
  std::uint64_t capacity = lifetimes.tombstones_max();
  if constexpr (requires { lifetimes.finished_max(); }) capacity += lifetimes.finished_max();
  return capacity;
}
template <class Lifetimes>
void add_finished_tombstones(std::vector<book>& out, const Lifetimes& lifetimes) {
  if constexpr (requires { lifetimes.finished_count(); }) {
    out.push_back({"lifetimes.finished", lifetimes.finished_count()});
  }
}
// ======================================================================================

}  // namespace

struct soak_driver::impl final : finish_listener, transfer_planner {
  struct request {
    bool live = false;
    room_key key;
    request_kind kind = request_kind::completes;
    std::uint32_t pages = 0;
    std::uint32_t chunks_total = 1;
    std::uint32_t chunks_sent = 0;
    std::vector<page_index> source;
    std::vector<page_index> destination;
    std::uint64_t admitted_tick = 0;
    std::uint64_t action_tick = 0;  // decode abort / prefill fail, once the first chunk is out
    bool action_done = false;
    bool fault_pending = false;  // transfer_fails / transfer_unconfirmed: next submit
    bool destination_known = false;
    bool source_allocated = false;
    bool opened = false;
    bool open_refused = false;
    bool abort_at_prefill = false;  // an ABORT for this key was delivered to prefill
    bool stop_sending = false;
    bool finish_called = false;
    bool outcome_reported = false;
    bool chunk_ready_seen = false;
    bool complete_called = false;
    bool prefill_done = false;  // request_finished on rank 0
    bool decode_done = false;   // request_finished on rank 1
  };

  explicit impl(const soak_config& c)
      : config(c),
        choices(c.seed),
        transfers(*this, unknown_handle_polls),
        prefill_control(net),
        decode_control(net),
        events(*this),
        cut(set_up_core(core_ports{transfers, prefill_control, decode_control, time, peers, events},
                        c)),
        slots(c.window),
        slot_of_room(c.room_ids, -1),
        generation_of_room(c.room_ids, 0) {
    for (room_id room = 0; room < c.room_ids; ++room) free_rooms.push_back(room);
  }

  // --- listeners ---------------------------------------------------------------------------
  request* live_request(room_key key) {
    if (key.room >= slot_of_room.size()) return nullptr;
    const int slot = slot_of_room[key.room];
    if (slot < 0) return nullptr;
    request& r = slots[static_cast<std::size_t>(slot)];
    return r.live && r.key == key ? &r : nullptr;
  }

  void on_request_finished(rank_id rank, room_key key) override {
    request* r = live_request(key);
    if (r == nullptr) return;
    (rank == prefill_rank ? r->prefill_done : r->decode_done) = true;
  }

  transfer_plan plan(const transfer_request& t) override {
    transfer_plan p;
    request* r = live_request(t.owner);
    const request_kind kind = r != nullptr ? r->kind : request_kind::completes;
    switch (kind) {
      case request_kind::decode_abort:
        p.in_flight_polls = choices.between(3, 6);
        break;
      case request_kind::deadline_quarantine:
        p.in_flight_polls = choices.between(8, 12);
        break;
      case request_kind::prefill_fail:
        p.in_flight_polls = choices.between(2, 5);
        break;
      default:
        p.in_flight_polls = choices.between(0, 3);
        break;
    }
    if (r != nullptr && r->fault_pending) {
      r->fault_pending = false;
      if (kind == request_kind::transfer_fails) p.end = transfer_poll::failed;
      if (kind == request_kind::transfer_unconfirmed) p.unconfirmed_polls = choices.between(1, 3);
    }
    return p;
  }

  // --- one tick: one scheduler iteration of each rank ----------------------------------------
  void tick() {
    ++ticks;
    time.now += tick_us;
    admit();
    deliver_to_prefill();
    for (request& r : slots) {
      if (r.live) act(r);
    }
    for (request& r : slots) {
      if (r.live) prefill_step(r);
    }
    ++ops;
    cut.prefill->poll();
    for (request& r : slots) {
      if (r.live) after_poll(r);
    }
    deliver_to_decode();
    for (request& r : slots) {
      if (r.live) decode_step(r);
    }
    ops += 2;
    cut.decode->check_deadlines();
    cut.decode->check_peers();
    retire();
  }

  void admit() {
    for (std::size_t s = 0; s < slots.size() && admitted < config.requests; ++s) {
      request& r = slots[s];
      if (r.live) continue;
      if (free_rooms.empty()) return;
      // One in ten takes the room freed last (quick reuse), the rest the one freed first.
      const bool quick = choices.below(10) == 0;
      const room_id room = quick ? free_rooms.back() : free_rooms.front();
      const room_key key{room, generation_of_room[room] + 1};
      const std::uint32_t pages = choices.between(1, config.max_pages_per_request);
      ++ops;
      const auto destination = cut.decode->prealloc(key, pages, {prefill_rank});
      if (!destination) return;  // pool full (allocation_refused counted): try next tick
      quick ? free_rooms.pop_back() : free_rooms.pop_front();
      generation_of_room[room] = key.generation;
      slot_of_room[room] = static_cast<int>(s);

      r = request{};
      r.live = true;
      r.key = key;
      r.kind = draw_kind();
      r.pages = pages;
      r.chunks_total = std::min<std::uint32_t>(pages, choices.between(1, 3));
      r.admitted_tick = ticks;
      r.fault_pending =
          r.kind == request_kind::transfer_fails || r.kind == request_kind::transfer_unconfirmed;
      r.source.reserve(pages);
      r.destination.reserve(pages);
      ++admitted;
      ++summary.admitted_by_kind[static_cast<std::size_t>(r.kind)];

      ++ops;
      cut.decode->publish(key);
      if (r.kind == request_kind::abort_before_open) {
        ++ops;
        cut.decode->abort(key, std::nullopt);
        r.action_done = true;
      }
    }
  }

  request_kind draw_kind() {
    std::uint32_t draw = choices.below(10'000);
    for (std::size_t k = 0; k < request_kind_count; ++k) {
      if (draw < kind_mix_bp[k]) return static_cast<request_kind>(k);
      draw -= kind_mix_bp[k];
    }
    return request_kind::completes;
  }

  void deliver_to_prefill() {
    auto& inbox = net.inbox[prefill_rank];
    while (!inbox.empty()) {
      const control_message m = std::move(inbox.front());
      inbox.pop_front();
      request* r = live_request(m.key);
      switch (m.kind) {
        case control_kind::metadata:
          if (r != nullptr) {
            r->destination = m.pages;
            r->destination_known = true;
          }
          break;
        case control_kind::abort:
          ++ops;
          cut.prefill->on_abort(m);
          if (r != nullptr) r->abort_at_prefill = true;
          break;
        default:
          break;  // nothing else goes to prefill
      }
    }
  }

  void deliver_to_decode() {
    auto& inbox = net.inbox[decode_rank];
    while (!inbox.empty()) {
      const control_message m = std::move(inbox.front());
      inbox.pop_front();
      ++ops;
      cut.decode->on_message(m);
      if (m.kind == control_kind::chunk_ready) {
        if (request* r = live_request(m.key)) r->chunk_ready_seen = true;
      }
    }
  }

  // Decode aborts (decode_abort, deadline_quarantine) and prefill fails (prefill_fail) once the
  // first chunk is on its way.
  void act(request& r) {
    if (r.action_done || r.chunks_sent == 0 || ticks < r.action_tick) return;
    switch (r.kind) {
      case request_kind::decode_abort:
      case request_kind::deadline_quarantine:
        if (!r.complete_called) {
          std::optional<std::uint64_t> deadline;
          if (r.kind == request_kind::deadline_quarantine) deadline = time.now + 2 * tick_us;
          ++ops;
          cut.decode->abort(r.key, deadline);
        }
        r.action_done = true;
        return;
      case request_kind::prefill_fail:
        if (!r.finish_called) {
          ++ops;
          cut.prefill->fail(r.key);
        }
        r.action_done = true;
        return;
      default:
        r.action_done = true;
        return;
    }
  }

  void prefill_step(request& r) {
    if (!r.opened && !r.open_refused) {
      // The tombstone path: the open comes only after the ABORT reached prefill.
      if (r.kind == request_kind::abort_before_open && !r.abort_at_prefill) return;
      if (!r.source_allocated) {
        ++ops;
        auto source = cut.prefill_ledger->allocate(r.key, r.pages);
        if (!source) return;  // pool full: next tick
        r.source = source.value();
        r.source_allocated = true;
      }
      ++ops;
      const rank_id decode_ranks[] = {decode_rank};
      if (cut.prefill->open(r.key, r.source, decode_ranks)) {
        r.opened = true;
        if (r.kind == request_kind::abort_before_open) {
          ++summary.late_opens_admitted;  // the tombstone did not stop it: note it, wind down
          r.stop_sending = true;
        }
      } else {
        r.open_refused = true;
        // The sender never existed: the scheduler gives its source pages back itself.
        ++ops;
        (void)cut.prefill_ledger->release(r.key, r.source);
        return;
      }
    }
    if (!r.opened || r.stop_sending || r.finish_called || !r.destination_known ||
        r.chunks_sent >= r.chunks_total) {
      return;
    }
    const std::size_t from = r.chunks_sent * r.pages / r.chunks_total;
    const std::size_t to = (r.chunks_sent + 1) * r.pages / r.chunks_total;
    const std::uint32_t siblings =
        choices.between(1, std::min<std::uint32_t>(4, static_cast<std::uint32_t>(to - from)));
    const std::span<const page_index> source(r.source.data() + from, to - from);
    const std::span<const page_index> destination(r.destination.data() + from, to - from);
    ++ops;
    if (cut.prefill->send_chunk(r.key, decode_rank, source, destination, siblings)) {
      if (++r.chunks_sent == 1) r.action_tick = ticks + choices.between(1, 2);
    } else {
      r.stop_sending = true;
    }
  }

  void after_poll(request& r) {
    if (!r.opened || r.finish_called) return;
    if (r.abort_at_prefill) {  // decode asked: it knows; prefill is done once drained
      finish(r);
      return;
    }
    ++ops;
    // The engine's view of the request, as SGLang's scheduler polls the sender's status.
    if (cut.statuses->get(r.key) == kv_status::failed) {
      finish(r);
      return;
    }
    if (r.stop_sending) {  // refused for no reason the driver knows of
      if (r.kind != request_kind::abort_before_open) ++summary.chunks_refused;
      finish(r);
      return;
    }
    if (r.chunks_sent < r.chunks_total) return;
    ++ops;
    if (!cut.prefill->in_flight(r.key)) {
      finish(r);
    }
  }

  void finish(request& r) {
    ++ops;
    cut.prefill->finish(r.key);
    r.finish_called = true;
  }

  // How prefill's side of a request ended reaches decode from the core itself: the sender
  // was opened with the decode rank and tells it (chunk_ready or a failed status) once the
  // request is finished there and nothing is in flight.

  void decode_step(request& r) {
    if (!r.chunk_ready_seen || r.complete_called) return;
    r.chunk_ready_seen = false;
    ++ops;
    if (!cut.decode->transfer_complete(r.key)) return;  // aborting: the ACK ends it
    ++ops;
    cut.decode->complete(r.key);
    r.complete_called = true;
  }

  void retire() {
    for (request& r : slots) {
      if (!r.live) continue;
      if (r.prefill_done && r.decode_done) {
        r.live = false;
        slot_of_room[r.key.room] = -1;
        free_rooms.push_back(r.key.room);
        ++served;
        continue;
      }
      if (ticks - r.admitted_tick > stuck_ticks) {
        char line[512];
        std::snprintf(line, sizeof line,
                      "request %s (%s) still live after %llu ticks: opened=%d refused=%d "
                      "chunks %u/%u finish=%d abort_at_prefill=%d prefill_done=%d "
                      "decode_done=%d",
                      kvsim::core::to_string(r.key).c_str(), to_string(r.kind),
                      static_cast<unsigned long long>(stuck_ticks), r.opened, r.open_refused,
                      r.chunks_sent, r.chunks_total, r.finish_called, r.abort_at_prefill,
                      r.prefill_done, r.decode_done);
        throw std::runtime_error(line);
      }
    }
  }

  bool any_live() const {
    return std::any_of(slots.begin(), slots.end(), [](const request& r) { return r.live; });
  }

  soak_config config;
  splitmix choices;
  std::uint64_t unknown_handle_polls = 0;
  network net;
  scripted_transfers transfers;
  queue_messenger prefill_control;
  queue_messenger decode_control;
  manual_clock time;
  always_alive peers;
  counting_sink events;
  core_under_test cut;  // the core under test: set_up_core builds it

  std::vector<request> slots;
  std::vector<int> slot_of_room;
  std::vector<generation_t> generation_of_room;
  std::deque<room_id> free_rooms;
  std::uint64_t admitted = 0;
  std::uint64_t served = 0;
  std::uint64_t ops = 0;
  std::uint64_t ticks = 0;
  soak_summary summary;
};

soak_driver::soak_driver(const soak_config& config) : impl_(std::make_unique<impl>(config)) {}
soak_driver::~soak_driver() = default;

void soak_driver::run_until(std::uint64_t served) {
  if (served > impl_->config.requests) {
    throw std::runtime_error("run_until beyond the configured number of requests");
  }
  while (impl_->served < served) impl_->tick();
}

std::uint64_t soak_driver::served() const { return impl_->served; }
std::uint64_t soak_driver::operations() const { return impl_->ops; }

std::vector<book> soak_driver::books() const {
  const core_under_test& c = impl_->cut;
  std::vector<book> out;
  out.push_back({"decode.requests", c.decode->request_count()});
  out.push_back({"prefill.rooms", c.prefill->room_count()});
  out.push_back({"lifetimes.rooms", c.lifetimes->room_count()});
  out.push_back({"lifetimes.tombstones", c.lifetimes->tombstone_count()});
  add_finished_tombstones(out, *c.lifetimes);
  out.push_back({"prefill.statuses", c.statuses->size()});
  out.push_back({"prefill.tokens", c.prefill_tokens->remembered()});
  out.push_back({"decode.tokens", c.decode_tokens->remembered()});
  // The keys retired with their rooms (prefill) and requests (decode): bounded by each
  // verifier's capacity, which the soak sizes like the tombstone tables.
  out.push_back({"prefill.tokens.retired", c.prefill_tokens->retired_count()});
  out.push_back({"decode.tokens.retired", c.decode_tokens->retired_count()});
  out.push_back({"prefill.leases", c.prefill_ledger->active_lease_count()});
  out.push_back({"decode.leases", c.decode_ledger->active_lease_count()});
  return out;
}

std::uint64_t soak_driver::book_bound() const {
  return 4ULL * impl_->config.window + tombstone_capacity(*impl_->cut.lifetimes);
}

std::vector<std::string> soak_driver::final_audit() {
  impl& d = *impl_;
  std::vector<std::string> problems;
  if (d.admitted != d.config.requests || d.served != d.config.requests || d.any_live()) {
    problems.push_back("audit before every request was served (" + std::to_string(d.served) +
                       " of " + std::to_string(d.config.requests) + ")");
    return problems;
  }
  // Deliver whatever is still queued (stale ACKs, late statuses) and let the core poll.
  for (int i = 0; i < 100 && (!d.net.inbox[0].empty() || !d.net.inbox[1].empty()); ++i) d.tick();
  if (!d.net.inbox[0].empty() || !d.net.inbox[1].empty()) {
    problems.push_back("control messages still queued after 100 idle ticks");
  }
  if (d.transfers.running() != 0) {
    problems.push_back(std::to_string(d.transfers.running()) + " transfers never reported ended");
  }
  const auto audit_ledger = [&](const char* name, const page_ledger& ledger) {
    if (ledger.free_count() != ledger.pages_total()) {
      problems.push_back(std::string(name) + " ledger: " + std::to_string(ledger.free_count()) +
                         " of " + std::to_string(ledger.pages_total()) + " pages free (" +
                         std::to_string(ledger.owned_count()) + " owned, " +
                         std::to_string(ledger.retiring_count()) + " retiring, " +
                         std::to_string(ledger.quarantined_page_count()) + " quarantined)");
    }
    if (ledger.active_lease_count() != 0) {
      problems.push_back(std::string(name) + " ledger: " +
                         std::to_string(ledger.active_lease_count()) + " leases still active");
    }
    for (const std::string& line : ledger.check_consistency()) {
      problems.push_back(std::string(name) + " ledger: " + line);
    }
  };
  audit_ledger("prefill", *d.cut.prefill_ledger);
  audit_ledger("decode", *d.cut.decode_ledger);
  if (d.events.count<ledger_misuse>() != 0) {
    problems.push_back(std::to_string(d.events.count<ledger_misuse>()) +
                       " ledger_misuse events: the driver misused a ledger");
  }
  return problems;
}

soak_summary soak_driver::summary() const {
  const impl& d = *impl_;
  soak_summary s = d.summary;
  s.events = d.events.total();
  s.releases_completed = d.events.releases_completed;
  s.releases_after_acks = d.events.releases_after_acks;
  s.releases_other = d.events.releases_other;
  s.deadline_quarantines = d.events.deadline_quarantines;
  s.quarantines_confirmed = d.events.count<quarantine_confirmed>();
  s.transfers_unconfirmed = d.events.count<transfer_unconfirmed>();
  s.late_opens_refused = d.events.late_opens_refused;
  s.tombstones_evicted = d.events.count<tombstone_evicted>();
  s.lifetime_refusals = d.events.count<lifetime_refused>();
  s.ledger_misuse = d.events.count<ledger_misuse>();
  s.tokens_rejected = d.events.count<token_rejected>();
  s.allocations_refused = d.events.count<allocation_refused>();
  s.unknown_handle_polls = d.unknown_handle_polls;
  s.ticks = d.ticks;
  return s;
}

}  // namespace kvsim::tools::soak
