#include "real_backend/transfer_script.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/abort_token.h"
#include "core/decode_receiver.h"
#include "core/page_ledger.h"
#include "core/prefill_sender.h"
#include "core/room_lifetimes.h"
#include "core/transfer_status_table.h"
#include "real_backend/errors.h"
#include "real_backend/event_log.h"
#include "real_backend/peers_in_process.h"
#include "real_backend/script_support.h"
#include "real_backend/steady_clock_port.h"
#include "real_backend/tcp_messenger.h"

namespace kvsim::real {
namespace {

using core::page_index;
using core::rank_id;
using core::room_key;

constexpr rank_id prefill_rank = 0;
constexpr rank_id decode_rank = 1;
constexpr std::uint32_t tombstones_max = 64;
constexpr auto step_pause = std::chrono::microseconds(50);

// Findings from the core's events alone, the rules of the simulator's checkers:
//   I2: prefill sends a drain-ACK while the room is open or a transfer of it is in flight;
//   I3: decode frees a page of a request whose abort it armed before every expected rank's
//       drain-ACK was counted.
class event_watch {
 public:
  explicit event_watch(finding_log& findings) : findings_(findings) {}

  // "1 of 2": drain-ACKs counted for an armed abort.
  std::string counted_text(room_key key) const {
    const std::lock_guard lock(mutex_);
    const auto it = armed_.find(key);
    if (it == armed_.end()) return "none armed";
    return std::to_string(it->second.counted.size()) + " of " +
           std::to_string(it->second.expected.size());
  }

  void observe(const core::event& e) {
    const std::lock_guard lock(mutex_);
    if (const auto* ack = std::get_if<core::drain_ack_sent>(&e.body)) {
      if (ack->room_closed && ack->in_flight == 0) return;
      findings_.add("I2: rank " + std::to_string(e.rank) + " sent the drain-ACK for " +
                    core::to_string(ack->key) + " to rank " + std::to_string(ack->to) + " while " +
                    (ack->in_flight != 0 ? "its transfer was still in flight" : "") +
                    (ack->in_flight != 0 && !ack->room_closed ? " and " : "") +
                    (!ack->room_closed ? "the room was still open" : ""));
      return;
    }
    if (e.rank != decode_rank) return;
    if (const auto* armed = std::get_if<core::abort_armed>(&e.body)) {
      auto& a = armed_[armed->key];
      a.expected.insert(armed->expected_ranks.begin(), armed->expected_ranks.end());
    } else if (const auto* counted = std::get_if<core::drain_ack_counted>(&e.body)) {
      armed_[counted->key].counted.insert(counted->from);
    } else if (const auto* freed = std::get_if<core::page_freed>(&e.body)) {
      const auto it = armed_.find(freed->owner);
      if (it == armed_.end() || reported_.contains(freed->owner)) return;
      std::vector<rank_id> missing;
      for (rank_id r : it->second.expected) {
        if (!it->second.counted.contains(r)) missing.push_back(r);
      }
      if (missing.empty()) return;
      reported_.insert(freed->owner);
      std::string who;
      for (rank_id r : missing) who += (who.empty() ? "" : ", ") + std::to_string(r);
      findings_.add("I3: rank " + std::to_string(e.rank) + " freed page " +
                    std::to_string(freed->page) + " of " + core::to_string(freed->owner) +
                    " while the drain-ACK from rank " + who + " was still missing (abort armed, " +
                    std::to_string(it->second.counted.size()) + " of " +
                    std::to_string(it->second.expected.size()) + " counted)");
    }
  }

 private:
  struct armed_abort {
    std::set<rank_id> expected;
    std::set<rank_id> counted;
  };
  finding_log& findings_;
  mutable std::mutex mutex_;
  std::map<room_key, armed_abort> armed_;
  std::set<room_key> reported_;
};

struct request_state {
  bool started = false;
  std::vector<page_index> source;
  std::vector<page_index> destination;
  bool opened = false;
  bool chunks_sent = false;
  bool posted = false;    // prefill sent its outcome to decode and finished the request
  bool verified = false;  // decode read its pages
  bool held = false;      // aborted while its gate held it, transfer not ended yet
};

class transfer_run {
 public:
  transfer_run(const scenarios::scenario_spec& spec, core::variant v, data_plane& plane,
               const script_options& options)
      : spec_(spec),
        plane_text_(plane.name() == "cuda" ? "the device" : "host memory"),
        options_(options),
        watch_(findings_),
        prefill_pages_(plane.make_pages(0, spec.topology.pages_per_rank, spec.topology.page_bytes)),
        decode_pages_(plane.make_pages(1, spec.topology.pages_per_rank, spec.topology.page_bytes)),
        prefill_ledger_(prefill_rank, spec.topology.pages_per_rank, log_,
                        core::ledger_options{core::allocation_order::lifo,
                                             v.has(core::bug::b3_source_reuse)
                                                 ? core::release_policy::free_while_leased
                                                 : core::release_policy::defer_while_leased}),
        lifetimes_(prefill_rank, log_, tombstones_max),
        statuses_(prefill_rank, log_),
        prefill_tokens_(prefill_rank, run_key(), log_),
        engine_(plane.make_transfer_engine(prefill_rank, *prefill_pages_,
                                           {{decode_rank, decode_pages_.get()}})),
        prefill_net_(prefill_rank),
        decode_net_(decode_rank),
        sender_(prefill_rank, {*engine_, prefill_net_, log_},
                {prefill_ledger_, lifetimes_, statuses_, prefill_tokens_}, v),
        decode_ledger_(decode_rank, spec.topology.pages_per_rank, log_),
        issuer_(decode_rank, run_key(), log_),
        decode_tokens_(decode_rank, run_key(), log_),
        receiver_(decode_rank, {decode_net_, clock_, log_, peers_},
                  {decode_ledger_, issuer_, decode_tokens_}, v),
        requests_(spec.requests.size()) {
    log_.observe([this](const core::event& e) { watch_.observe(e); });
    std::map<core::room_id, core::generation_t> generations;
    for (const scenarios::request_spec& r : spec_.requests)
      keys_.push_back({r.room, generations[r.room]++});
    for (const auto& g : spec_.faults.gates) {
      gates_.push_back(plane.make_gate());
      engine_->hold(keys_.at(g.request), *gates_.back(), g.before_page);
    }
    // Control plane: decode listens on loopback, prefill connects (the handshake completes in
    // the listen backlog, so one thread can do both in turn).
    const std::uint16_t port = decode_net_.listen("127.0.0.1", 0);
    prefill_net_.connect(decode_rank, "127.0.0.1", port, options_.patience);
    decode_net_.accept_peers(1, options_.patience);
  }

  ~transfer_run() {
    // A gate left closed would keep its copies (and every synchronisation of the device
    // waiting on them) hanging: open them all before anything is freed.
    for (auto& g : gates_) g->open();
  }

  std::vector<real_finding> run() {
    try {
      for (std::size_t r = 0; r < spec_.requests.size(); ++r) {
        if (const auto after = spec_.requests[r].after) wait_for_end_on_decode(*after);
        start(r);
        if (spec_.requests[r].abort) {
          abort_while_held(r);
        } else {
          await_end_on_decode(r);
        }
      }
      open_held_gates();
      for (std::size_t r = 0; r < spec_.requests.size(); ++r) await_end_on_decode(r);
      run_until([&] { return everything_ended(); }, "every request ending on both ranks");
    } catch (const stuck&) {
      // Reported as I9; nothing later in the script can happen.
    }
    return findings_.findings();
  }

 private:
  struct stuck {};

  // --- the script ----------------------------------------------------------------------
  void wait_for_end_on_decode(std::size_t earlier) {
    if (ended_on_decode(earlier)) return;
    open_held_gates();  // nothing else can move: the held transfer resumes now
    await_end_on_decode(earlier);
  }

  bool ended_on_decode(std::size_t r) const {
    return receiver_.finished(keys_[r]) || receiver_.quarantined(keys_[r]);
  }

  // Decode ends request `r`. Once prefill has nothing of it in flight, only a message can
  // still end it: if none does within the liveness bound, that is I9 and the run stops.
  void await_end_on_decode(std::size_t r) {
    const room_key key = keys_[r];
    run_until(
        [&] { return ended_on_decode(r) || (requests_[r].posted && !sender_.in_flight(key)); },
        "prefill ending " + core::to_string(key));
    const auto deadline = std::chrono::steady_clock::now() + options_.liveness;
    while (!ended_on_decode(r)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        const bool aborting = receiver_.aborting(key);
        findings_.add("I9: " + core::to_string(key) + " was " +
                      (aborting ? "aborted on rank " : "sent to rank ") +
                      std::to_string(decode_rank) + " and did not finish there within " +
                      std::to_string(options_.liveness.count()) + " ms (" +
                      (aborting ? "drain-ACKs counted: " + watch_.counted_text(key) + "; " : "") +
                      "prefill's transfer of it has ended)");
        throw stuck{};
      }
      prefill_step();
      decode_step();
      std::this_thread::sleep_for(step_pause);
    }
  }

  void start(std::size_t r) {
    const room_key key = keys_[r];
    const scenarios::request_spec& req = spec_.requests[r];
    request_state& st = requests_[r];
    st.started = true;
    std::optional<std::vector<page_index>> pages;
    run_until(
        [&] { return (pages = receiver_.prealloc(key, req.pages, {prefill_rank})).has_value(); },
        "decode pre-allocating " + std::to_string(req.pages) + " pages for " +
            core::to_string(key));
    st.destination = *pages;
    receiver_.publish(key);
    run_until(
        [&] {
          auto allocated = prefill_ledger_.allocate(key, req.pages);
          if (allocated) st.source = allocated.value();
          return static_cast<bool>(allocated);
        },
        "prefill allocating " + std::to_string(req.pages) + " source pages for " +
            core::to_string(key));
    for (std::uint32_t j = 0; j < st.source.size(); ++j) {
      prefill_pages_->write_canary(st.source[j], key, j);
    }
    st.opened = sender_.open(key, st.source);
    if (!st.opened) {
      (void)prefill_ledger_.release_all(key);
      st.posted = true;
      return;
    }
    run_until([&] { return metadata_[key].contains(decode_rank) || lifetimes_.is_closed(key); },
              "prefill receiving decode's metadata for " + core::to_string(key));
    send_chunks(r);
  }

  void send_chunks(std::size_t r) {
    const room_key key = keys_[r];
    const scenarios::request_spec& req = spec_.requests[r];
    request_state& st = requests_[r];
    st.chunks_sent = true;
    const auto it = metadata_[key].find(decode_rank);
    if (it == metadata_[key].end()) return;  // closed before the metadata came
    const std::vector<page_index>& destination = it->second;
    const std::size_t chunks = std::max<std::size_t>(1, req.chunks);
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t from = c * st.source.size() / chunks;
      const std::size_t to = (c + 1) * st.source.size() / chunks;
      const std::vector<page_index> src(st.source.begin() + from, st.source.begin() + to);
      const std::vector<page_index> dst(destination.begin() + from, destination.begin() + to);
      if (!sender_.send_chunk(key, decode_rank, src, dst, req.siblings)) return;  // closed
    }
  }

  void abort_while_held(std::size_t r) {
    const room_key key = keys_[r];
    request_state& st = requests_[r];
    for (std::size_t g = 0; g < spec_.faults.gates.size(); ++g) {
      if (spec_.faults.gates[g].request != r) continue;
      hold_gate& gate = *gates_[g];
      run_until([&] { return gate.reached(); },
                "the transfer of " + core::to_string(key) + " reaching its gate");
      // The pages before the gate have landed now, while decode still owns them.
      for (const held_transfer& h : engine_->held_at(gate))
        check_landed(h.request, 0, h.before_page);
    }
    receiver_.abort(key, std::nullopt);
    st.held = true;
    run_until([&] { return aborts_seen_.contains(key); },
              "prefill receiving the ABORT of " + core::to_string(key));
  }

  void open_held_gates() {
    for (std::size_t g = 0; g < spec_.faults.gates.size(); ++g) {
      if (requests_[spec_.faults.gates[g].request].held) gates_[g]->open();
    }
  }

  bool any_held_in_flight() const {
    for (std::size_t r = 0; r < requests_.size(); ++r) {
      if (requests_[r].held && sender_.in_flight(keys_[r])) return true;
    }
    return false;
  }

  bool everything_ended() const {
    for (std::size_t r = 0; r < requests_.size(); ++r) {
      const request_state& st = requests_[r];
      if (!st.posted || sender_.tracking(keys_[r])) return false;
      if (!receiver_.finished(keys_[r]) && !receiver_.quarantined(keys_[r])) return false;
    }
    return true;
  }

  template <class Done>
  void run_until(Done done, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + options_.patience;
    for (;;) {
      prefill_step();
      decode_step();
      if (done()) return;
      if (std::chrono::steady_clock::now() >= deadline) {
        throw real_backend_error("real run of '" + spec_.name + "': " + what +
                                 " did not happen within " +
                                 std::to_string(options_.patience.count()) + " ms");
      }
      std::this_thread::sleep_for(step_pause);
    }
  }

  // --- one event-loop iteration of each rank ---------------------------------------------
  void prefill_step() {
    while (auto message = prefill_net_.try_receive()) {
      if (message->kind == core::control_kind::metadata) {
        metadata_[message->key][message->from] = message->pages;
      } else if (message->kind == core::control_kind::abort) {
        aborts_seen_.insert(message->key);
        sender_.on_abort(*message);
      }
    }
    sender_.poll();
    for (const ended_transfer& e : engine_->take_ended()) {
      check_landed(e.request, e.first_unconfirmed_page,
                   static_cast<std::uint32_t>(e.request.source_pages.size()));
    }
    for (std::size_t r = 0; r < requests_.size(); ++r) post_if_done(r);
  }

  // Prefill tells decode how the request ended (as the simulator's prefill scheduler does),
  // then finishes it; the sender's poll sends any drain-ACK still owed.
  void post_if_done(std::size_t r) {
    request_state& st = requests_[r];
    const room_key key = keys_[r];
    if (!st.started || !st.opened || !st.chunks_sent || st.posted || sender_.in_flight(key)) return;
    if (st.held) {
      st.held = false;  // its late transfer has ended
    } else if (any_held_in_flight()) {
      // This request's data has landed: the adversarial moment for a held transfer to resume,
      // before decode hears that this request is complete.
      open_held_gates();
      return;
    }
    const bool failed = lifetimes_.is_closed(key) || sender_.chunk_failed(key);
    if (failed) {
      prefill_net_.send(decode_rank, {core::control_kind::status,
                                      prefill_rank,
                                      key,
                                      std::nullopt,
                                      {},
                                      core::kv_status::failed});
    } else {
      prefill_net_.send(decode_rank,
                        {core::control_kind::chunk_ready, prefill_rank, key, std::nullopt, {}, {}});
    }
    sender_.finish(key);
    st.posted = true;
  }

  void decode_step() {
    while (auto message = decode_net_.try_receive()) receiver_.on_message(*message);
    for (std::size_t r = 0; r < requests_.size(); ++r) {
      request_state& st = requests_[r];
      const room_key key = keys_[r];
      if (!st.started || st.verified || !receiver_.transfer_complete(key)) continue;
      const std::vector<page_index>& pages = receiver_.pages(key);
      for (std::uint32_t j = 0; j < pages.size(); ++j) read_page(key, pages[j], j);
      receiver_.complete(key);
      st.verified = true;
    }
    receiver_.check_deadlines();
  }

  // --- checks ----------------------------------------------------------------------------
  void read_page(room_key reader, page_index page, std::uint32_t logical) {
    const page_check c = decode_pages_->verify(page, reader, logical);
    if (c.intact) return;
    std::string found = "unrecognisable bytes";
    if (c.found) {
      const room_key writer{c.found->room, c.found->generation};
      found = writer == reader
                  ? "its own request's bytes, but not those of that logical page"
                  : "bytes written for " + core::to_string(writer) + " (its logical page " +
                        std::to_string(c.found->logical_page) + ")";
    }
    findings_.add("I7: " + core::to_string(reader) + " read page " + std::to_string(page) +
                  " on rank " + std::to_string(decode_rank) + " (its logical page " +
                  std::to_string(logical) + ") and found " + found + ", read back from " +
                  plane_text_);
  }

  std::uint32_t logical_of(const core::transfer_request& t, std::size_t i) const {
    for (std::size_t r = 0; r < keys_.size(); ++r) {
      if (keys_[r] != t.owner) continue;
      const auto& source = requests_[r].source;
      const auto it = std::find(source.begin(), source.end(), t.source_pages[i]);
      return static_cast<std::uint32_t>(it - source.begin());
    }
    return static_cast<std::uint32_t>(i);
  }

  // Pages [from, to) of `t` have landed: read from source pages their owner still held,
  // into destination pages their owner still holds, with its bytes.
  void check_landed(const core::transfer_request& t, std::uint32_t from, std::uint32_t to) {
    for (std::uint32_t i = from; i < to && i < t.destination_pages.size(); ++i) {
      const page_index source = t.source_pages[i];
      if (const std::optional<room_key> holder = prefill_ledger_.owner_of(source);
          holder != t.owner) {
        findings_.add("I1: a transfer of " + core::to_string(t.owner) + " read source page " +
                      std::to_string(source) + " on rank " + std::to_string(prefill_rank) +
                      " after rank " + std::to_string(prefill_rank) +
                      (holder ? " had given it to " + core::to_string(*holder)
                              : std::string(" had freed it")));
      }
      const page_index page = t.destination_pages[i];
      const std::uint32_t logical = logical_of(t, i);
      const std::optional<room_key> holder = decode_ledger_.owner_of(page);
      const page_check c = decode_pages_->verify(page, t.owner, logical);
      if (holder == t.owner) {
        if (!c.intact) {
          findings_.add("I7: a transfer of " + core::to_string(t.owner) + " landed in page " +
                        std::to_string(page) + " on rank " + std::to_string(decode_rank) +
                        ", which does not hold its bytes (logical page " + std::to_string(logical) +
                        ") afterwards");
        }
        continue;
      }
      findings_.add(
          "I1: a transfer of " + core::to_string(t.owner) + " wrote destination page " +
          std::to_string(page) + " on rank " + std::to_string(decode_rank) + " after " +
          (holder ? "rank " + std::to_string(decode_rank) + " had given it to " +
                        core::to_string(*holder)
                  : std::string("rank ") + std::to_string(decode_rank) + " had freed it") +
          (c.intact ? "; the page holds " + core::to_string(t.owner) + "'s bytes (logical page " +
                          std::to_string(logical) + "), read back from " + plane_text_
                    : std::string("")));
    }
  }

  const scenarios::scenario_spec& spec_;
  std::string plane_text_;  // where bytes are read back from, for the findings
  script_options options_;
  finding_log findings_;
  event_log log_;
  event_watch watch_;
  steady_clock_port clock_;
  peers_in_process peers_;
  std::vector<std::unique_ptr<hold_gate>> gates_;  // declared first: destroyed last
  std::unique_ptr<page_memory> prefill_pages_;
  std::unique_ptr<page_memory> decode_pages_;
  core::page_ledger prefill_ledger_;
  core::room_lifetimes lifetimes_;
  core::transfer_status_table statuses_;
  core::abort_token_verifier prefill_tokens_;
  std::unique_ptr<gated_transfer_engine> engine_;
  tcp_messenger prefill_net_;
  tcp_messenger decode_net_;
  core::prefill_sender sender_;
  core::page_ledger decode_ledger_;
  core::abort_token_issuer issuer_;
  core::abort_token_verifier decode_tokens_;
  core::decode_receiver receiver_;
  std::vector<room_key> keys_;
  std::vector<request_state> requests_;
  std::map<room_key, std::map<rank_id, std::vector<page_index>>> metadata_;
  std::set<room_key> aborts_seen_;
};

}  // namespace

real_outcome run_transfer_script(const scenarios::scenario_spec& spec, core::variant v,
                                 const std::string& variant_name, data_plane& plane,
                                 const script_options& options) {
  real_outcome outcome;
  outcome.scenario = spec.name;
  outcome.variant = variant_name;
  outcome.backend = plane.name();
  outcome.devices = std::min<std::uint32_t>(plane.devices(), 2);
  outcome.simulated_peers = plane.devices() < 2;
  outcome.notes.push_back(
      "prefill rank 0 on " + plane.device_of(0) + ", decode rank 1 on " + plane.device_of(1) +
      (plane.devices() < 2 ? " (one device: copies are device-local)" : " (peer copies)"));
  outcome.notes.push_back(
      "control messages over loopback TCP; both ranks stepped by one host "
      "thread in the scenario's script");
  transfer_run run(spec, v, plane, options);
  outcome.findings = run.run();
  return outcome;
}

}  // namespace kvsim::real
