// abort_example: one prefill rank and one decode rank, on kvsim's production core, through an
// abort that lands while a chunk is still being copied. Written for whoever integrates the
// core into a serving engine: it shows which ports the engine implements, which calls its
// scheduler and its control-message reader make, and what the core promises in return
// (docs/core-api.md says it in prose).
//
// The ports here are deliberately trivial: messages go through in-memory queues, and the
// "transfer engine" finishes a copy only when this program says so, which is how it holds the
// chunk in flight across the abort. Everything runs on one thread, so the threading contract
// (core/owner_thread.h: one owner thread per component) holds trivially.
//
// The protocol shown: decode pre-allocates destination pages and publishes them; prefill opens
// the request and queues a chunk; decode aborts (the client went away) while the chunk is in
// flight; prefill takes the ABORT, fails the request and closes its room, but owes the
// drain-ACK until the copy has ended; the copy ends, prefill's poll sends the ACK; decode
// counts it and only then frees its pages. Exit 0 when that held, 1 otherwise.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "core/decode_rank.h"
#include "core/events.h"
#include "core/ports.h"
#include "core/prefill_rank.h"

namespace core = kvsim::core;

namespace {

constexpr core::rank_id prefill_rank = 0;
constexpr core::rank_id decode_rank = 1;

// --- the ports: what the engine provides ---------------------------------------------------

// Every decision of the core arrives here as a typed event; describe() prints one line.
class printing_sink : public core::event_sink {
 public:
  void emit(const core::event& e) override {
    std::printf("  event: %s\n", core::describe(e).c_str());
  }
};

// Copies that end only when the program calls finish_all(): the chunk stays in flight for as long
// as the example needs it to. A real engine wraps its transport (NIXL, Mooncake, NCCL) here.
class manual_transfers : public core::transfer_engine {
 public:
  core::transfer_handle submit(const core::transfer_request&) override {
    state_.push_back(core::transfer_poll::in_flight);
    return state_.size() - 1;
  }
  core::transfer_poll poll(core::transfer_handle h) override { return state_.at(h); }
  bool cancel(core::transfer_handle) override { return false; }  // cannot confirm: say so
  void finish_all() {
    for (auto& s : state_) s = core::transfer_poll::succeeded;
  }
  bool any_in_flight() const {
    for (auto s : state_) {
      if (s == core::transfer_poll::in_flight) return true;
    }
    return false;
  }

 private:
  std::vector<core::transfer_poll> state_;
};

// One queue per rank. A real engine's messenger is its control connection (TCP, ZMQ), and
// its reader thread hands each message to the rank's owner thread, which calls the core.
struct network {
  std::map<core::rank_id, std::deque<core::control_message>> queues;
  const manual_transfers* transfers = nullptr;
  int acks_while_copying = 0;  // drain-ACKs sent while a copy was still in flight: must stay 0
};

class queue_messenger : public core::messenger {
 public:
  queue_messenger(network& net, core::rank_id self) : net_(net), self_(self) {}
  void send(core::rank_id to, const core::control_message& m) override {
    if (m.kind == core::control_kind::abort_ack && net_.transfers->any_in_flight()) {
      ++net_.acks_while_copying;
    }
    net_.queues[to].push_back(m);
  }
  // The core never calls it; this program delivers with next(). On one thread a blocking
  // receive on an empty queue would wait forever, so it refuses instead.
  core::control_message receive() override {
    if (auto m = next()) return *m;
    std::fprintf(stderr, "abort_example: receive() on an empty queue\n");
    std::abort();
  }
  std::optional<core::control_message> next() {
    auto& q = net_.queues[self_];
    if (q.empty()) return std::nullopt;
    core::control_message m = q.front();
    q.pop_front();
    return m;
  }

 private:
  network& net_;
  core::rank_id self_;
};

struct fixed_clock : core::clock {
  std::uint64_t now_us() const override { return 0; }
};
struct all_alive : core::peer_liveness {
  core::peer_state state(core::rank_id) const override { return core::peer_state::alive; }
};

struct ports {
  printing_sink events;
  manual_transfers transfers;
  network net;
  queue_messenger prefill_messenger{net, prefill_rank};
  queue_messenger decode_messenger{net, decode_rank};
  fixed_clock time;
  all_alive peers;
};

// --- SETUP: the only place that constructs core objects ----------------------------------
// The core's constructors may still change before 1.0; adapt here and nowhere else.
struct prefill_side {
  std::unique_ptr<core::prefill_rank> rank;
};
struct decode_side {
  std::unique_ptr<core::decode_rank> rank;
};

// 64 random bits, never zero: a fresh epoch for an abort-token issuer at every start.
std::uint64_t draw_epoch() {
  std::random_device entropy;
  std::uint64_t epoch = 0;
  while (epoch == 0) epoch = (std::uint64_t{entropy()} << 32) | entropy();
  return epoch;
}

void setup(ports& p, prefill_side& prefill, decode_side& decode) {
  // One secret per cluster: drawn at random, never a constant in the source. Each rank is
  // handed only the keys of its own links, derived from it (core/link_keys.h), so a rank
  // cannot mint tokens or prove messages for links it is no party to. The core wipes every
  // copy of a key it holds when it is destroyed; `key` is wiped here at the end of setup.
  core::cluster_key key;
  std::random_device entropy;
  for (auto& byte : key.bytes) byte = static_cast<std::uint8_t>(entropy());

  // Each rank's core is assembled by the core itself (core/prefill_rank.h, core/decode_rank.h):
  // its ledger, tables, tokens and the sender or receiver, wired; every historical bug off.
  prefill.rank = std::make_unique<core::prefill_rank>(
      prefill_rank, core::prefill_ports{p.transfers, p.prefill_messenger, p.events},
      core::link_keyring(prefill_rank, key, {decode_rank}),
      core::prefill_rank_options{.pages_total = 16, .tombstones_max = 1024});
  // The epoch is drawn at every start, so a restarted rank never mints a token that an
  // earlier capture holds (the nonce counter restarts; the epoch does not repeat).
  decode.rank = std::make_unique<core::decode_rank>(
      decode_rank, core::decode_ports{p.decode_messenger, p.time, p.events, p.peers},
      core::link_keyring(decode_rank, key, {prefill_rank}),
      core::decode_rank_options{.pages_total = 8, .token_epoch = draw_epoch()});
}
// --- end of SETUP --------------------------------------------------------------------------

void step(const char* what) { std::printf("\n== %s\n", what); }

int refused(const char* what) {
  std::fprintf(stderr, "abort_example: %s was refused\n", what);
  return 1;
}

}  // namespace

int main() {
  ports p;
  p.net.transfers = &p.transfers;
  prefill_side prefill;
  decode_side decode;
  setup(p, prefill, decode);
  // A request is one (room, generation): room ids are reused, so the generation tells apart
  // two requests that share a room id.
  const core::room_key request{42, 1};
  std::map<core::room_key, std::vector<core::page_index>> destination;  // prefill's copy of it

  // Delivers every queued message to the component that handles it (the engine's reader).
  // The sender does not read metadata: the engine keeps decode's destination pages itself.
  const auto deliver = [&] {
    while (auto m = p.prefill_messenger.next()) {
      if (m->kind == core::control_kind::metadata) destination[m->key] = m->pages;
      if (m->kind == core::control_kind::abort) prefill.rank->sender().on_abort(*m);
    }
    while (auto m = p.decode_messenger.next()) decode.rank->receiver().on_message(*m);
  };

  step("decode: pre-allocate destination pages, publish them to prefill");
  if (!decode.rank->receiver().prealloc(request, 4, {prefill_rank})) return refused("prealloc");
  decode.rank->receiver().publish(request);
  deliver();

  step("prefill: allocate source pages, open the request, queue one chunk");
  const auto source = prefill.rank->ledger().allocate(request, 4);
  if (!source) return refused("allocate");
  // Decode rank `decode_rank` waits for this request: the sender tells it the outcome.
  const core::rank_id waiting[] = {decode_rank};
  if (!prefill.rank->sender().open(request, source.value(), waiting)) return refused("open");
  if (!prefill.rank->sender().send_chunk(request, decode_rank, source.value(), destination.at(request),
                                  /*siblings=*/1)) {
    return refused("send_chunk");
  }

  step("decode: the client went away, abort while the chunk is being copied");
  decode.rank->receiver().abort(request, std::nullopt);
  deliver();  // prefill takes the ABORT: Failed, room closed, ACK target registered

  step("prefill: the scheduler is done with the request and polls; the copy still runs");
  // Giving the source pages back is safe at any time: the ledger retires pages a transfer
  // still reads and frees them when its lease ends. The poll sends no drain-ACK: the room is
  // closed but not drained.
  prefill.rank->sender().finish(request);
  prefill.rank->sender().poll();
  deliver();
  const bool source_retiring = prefill.rank->ledger().retiring_count() == 4;
  const bool pages_held = decode.rank->ledger().free_count() < decode.rank->ledger().pages_total();

  step("the transport reports the copy finished");
  p.transfers.finish_all();

  step("prefill: poll joins the chunk, frees the source, sends the drain-ACK; decode frees");
  prefill.rank->sender().poll();
  deliver();  // decode counts the ACK and only now frees its destination pages

  step("checks");
  bool ok = true;
  const auto check = [&](bool good, const char* what) {
    std::printf("  %s: %s\n", good ? "ok  " : "FAIL", what);
    ok = ok && good;
  };
  check(p.net.acks_while_copying == 0, "no drain-ACK went out while the copy was in flight");
  check(pages_held, "decode kept its pages while the copy was in flight");
  check(source_retiring, "prefill's source pages retired, not freed, while being read");
  check(decode.rank->receiver().finished(request), "decode finished the request");
  check(decode.rank->ledger().free_count() == decode.rank->ledger().pages_total(), "decode: every page free");
  check(prefill.rank->ledger().free_count() == prefill.rank->ledger().pages_total(), "prefill: every page free");
  check(decode.rank->ledger().check_consistency().empty() && prefill.rank->ledger().check_consistency().empty(),
        "both ledgers consistent");
  return ok ? 0 : 1;
}
