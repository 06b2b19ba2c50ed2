#include "real_backend/scripts/transfer_script.h"

#include <algorithm>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "real_backend/errors.h"
#include "real_backend/host/rank_thread.h"
#include "real_backend/scripts/script_rank.h"
#include "real_backend/host/step_signal.h"
#include "real_backend/wire/tcp_messenger.h"
#include "real_backend/scripts/transfer_context.h"
#include "real_backend/scripts/transfer_decode.h"
#include "real_backend/scripts/transfer_prefill.h"

namespace kvsim::real {
namespace {

using core::room_key;
using clock_type = std::chrono::steady_clock;

// How long a rank's loop waits for work before it polls its endpoints again.
constexpr auto rank_idle = std::chrono::microseconds(50);

// The script: it calls no core object. It hands each step to the rank that takes it and
// waits for that rank to say it is done (an ask, or a watched condition): one handshake per
// step, in the order of the scenario. The ranks may be threads of this process or processes
// of their own (script_rank.h).
class transfer_steps_run {
 public:
  transfer_steps_run(transfer_context& context, script_rank& prefill, script_rank& decode,
                     const script_options& options)
      : options_(options), context_(context), prefill_(prefill), decode_(decode) {}

  void run() {
    const auto& requests = context_.spec.requests;
    try {
      for (std::size_t r = 0; r < requests.size(); ++r) {
        if (const auto after = requests[r].after) wait_for_end_on_decode(*after);
        start(r);
        if (requests[r].abort) {
          abort_while_held(r);
        } else {
          await_end_on_decode(r);
        }
      }
      open_held_gates();
      for (std::size_t r = 0; r < requests.size(); ++r) await_end_on_decode(r);
      await_prefill("every request ending on both ranks", transfer_step::all_over, 0);
      await_decode("every request ending on both ranks", transfer_step::all_ended, 0);
    } catch (const stuck&) {
      // Reported as I9; nothing later in the script can happen.
    }
  }

 private:
  struct stuck {};
  using step = transfer_step;

  // --- the script ----------------------------------------------------------------------
  // A request that starts after `earlier` ended on decode. If it has not, and decode has
  // heard everything said so far, nothing else can move: the held transfer resumes now.
  void wait_for_end_on_decode(std::size_t earlier) {
    await_decode("the control messages in flight being handled", step::wire_quiet, 0);
    if (ask(decode_, step::ended, earlier) == "1") return;
    open_held_gates();
    await_end_on_decode(earlier);
  }

  // Decode ends request `r`. Once prefill has nothing of it in flight, only a message can
  // still end it: if none does within the liveness bound, that is I9 and the run stops.
  void await_end_on_decode(std::size_t r) {
    const room_key key = context_.keys[r];
    if (!await_either({step::over, r}, {step::ended, r}, options_.patience)) {
      give_up("prefill ending " + core::to_string(key));
    }
    if (await_either({}, {step::ended, r}, options_.liveness)) return;
    const bool aborting = ask(decode_, step::aborting, r) == "1";
    const std::string counted = aborting ? ask(decode_, step::counted_text, r) : "";
    context_.findings.add(
        "I9: " + core::to_string(key) + " was " +
            (aborting ? "aborted on rank " : "sent to rank ") + std::to_string(decode_rank) +
            " and did not finish there within " + std::to_string(options_.liveness.count()) +
            " ms (" + (aborting ? "drain-ACKs counted: " + counted + "; " : "") +
            "prefill's transfer of it has ended)",
        /*timing_dependent=*/true);
    throw stuck{};
  }

  // Decode pre-allocates and publishes; prefill fills its source pages with the request's
  // canary, opens, and sends the chunks once the metadata is in.
  void start(std::size_t r) {
    const room_key key = context_.keys[r];
    const std::string pages = std::to_string(context_.spec.requests[r].pages);
    await_decode("decode pre-allocating " + pages + " pages for " + core::to_string(key),
                 step::prealloc_and_publish, r);
    await_prefill("prefill allocating " + pages + " source pages for " + core::to_string(key),
                  step::open_request, r);
    await_prefill("prefill receiving decode's metadata for " + core::to_string(key),
                  step::send_when_published, r);
  }

  // Decode aborts `r` while its gate holds the copy (after the pages before the gate have
  // landed); its transfer stays held while the script goes on.
  void abort_while_held(std::size_t r) {
    const room_key key = context_.keys[r];
    for (std::size_t g = 0; g < context_.spec.faults.gates.size(); ++g) {
      if (context_.spec.faults.gates[g].request != r) continue;
      await_prefill("the transfer of " + core::to_string(key) + " reaching its gate",
                    step::check_at_gate, g);
    }
    ask(decode_, step::abort, r);
    ask(prefill_, step::hold, r);
    await_prefill("prefill receiving the ABORT of " + core::to_string(key), step::saw_abort, r);
  }

  void open_held_gates() { ask(prefill_, step::open_held_gates, 0); }

  // --- handshakes with the ranks ---------------------------------------------------------
  struct watched {
    std::optional<step> what;
    std::size_t r = 0;
    watched() = default;
    watched(step s, std::size_t index) : what(s), r(index) {}
  };

  std::string ask(script_rank& rank, step s, std::size_t r) {
    return rank.ask(s, r, clock_type::now() + options_.patience);
  }

  // Waits until the prefill step or the decode step (either may be empty) holds, at most
  // `within`; false when that passed first.
  bool await_either(watched on_prefill, watched on_decode, clock_type::duration within) {
    auto done = std::make_shared<step_signal>();
    if (on_prefill.what) prefill_.watch(*on_prefill.what, on_prefill.r, done);
    if (on_decode.what) decode_.watch(*on_decode.what, on_decode.r, done);
    const bool happened = done->wait_until(clock_type::now() + within);
    done->set();  // retires the watches that did not fire
    prefill_.rethrow_if_failed();
    decode_.rethrow_if_failed();
    return happened;
  }

  [[noreturn]] void give_up(const std::string& what) {
    throw real_backend_error("real run of '" + context_.spec.name + "': " + what +
                             " did not happen within " + std::to_string(options_.patience.count()) +
                             " ms");
  }
  void await_prefill(const std::string& what, step s, std::size_t r) {
    if (!await_either({s, r}, {}, options_.patience)) give_up(what);
  }
  void await_decode(const std::string& what, step s, std::size_t r) {
    if (!await_either({}, {s, r}, options_.patience)) give_up(what);
  }

  script_options options_;
  transfer_context& context_;
  script_rank& prefill_;
  script_rank& decode_;
};

// Both ranks in this process, each on a rank thread of its own, linked over loopback TCP.
class transfer_run {
 public:
  transfer_run(const scenarios::scenario_spec& spec, core::variant v, data_plane& plane,
               const script_options& options)
      : options_(options),
        context_(spec, v, plane),
        engine_(plane.make_transfer_engine(prefill_rank, *context_.prefill_pages,
                                           {{decode_rank, context_.decode_memory.get()}})),
        prefill_wire_(prefill_rank, derive_link_key(context_.secret)),
        decode_wire_(decode_rank, derive_link_key(context_.secret)) {
    hold_gated_transfers(context_, *engine_);
    // Control plane: decode listens on loopback, prefill connects; the link's handshake
    // (link_auth.h) needs both ends at once, so decode accepts on a helper thread. Each
    // endpoint is then used by its rank's thread only.
    const std::uint16_t port = decode_wire_.listen("127.0.0.1", 0);
    auto accepted =
        std::async(std::launch::async, [this] { decode_wire_.accept_peers(1, options_.patience); });
    try {
      prefill_wire_.connect(decode_rank, "127.0.0.1", port, options_.patience);
    } catch (...) {
      accepted.wait();  // it gives up at its own deadline
      throw;
    }
    accepted.get();
    prefill_ = std::make_unique<rank_thread<prefill_actor>>(
        "the prefill rank's thread",
        [this] { return std::make_unique<prefill_actor>(context_, prefill_wire_, *engine_); },
        rank_idle);
    decode_ = std::make_unique<rank_thread<decode_actor>>(
        "the decode rank's thread",
        [this] { return std::make_unique<decode_actor>(context_, decode_wire_); }, rank_idle);
  }

  ~transfer_run() {
    // A gate left closed would keep its copies (and every synchronisation of the device
    // waiting on them) hanging: open them all before anything is freed. Then each rank's
    // thread destroys its core objects and ends.
    for (auto& g : context_.gates) g->open();
    decode_.reset();
    prefill_.reset();
  }

  std::vector<real_finding> run() {
    local_rank<prefill_actor> prefill(*prefill_);
    local_rank<decode_actor> decode(*decode_);
    run_transfer_steps(context_, prefill, decode, options_);
    return context_.findings.findings();
  }
  std::vector<recorded_event> recorded() const { return context_.recording.events(); }

 private:
  script_options options_;
  transfer_context context_;
  std::unique_ptr<gated_transfer_engine> engine_;
  tcp_messenger prefill_wire_;  // the prefill thread's endpoint once the threads run
  tcp_messenger decode_wire_;   // the decode thread's
  std::unique_ptr<rank_thread<prefill_actor>> prefill_;
  std::unique_ptr<rank_thread<decode_actor>> decode_;
};

}  // namespace

void hold_gated_transfers(transfer_context& context, gated_transfer_engine& engine) {
  for (std::size_t g = 0; g < context.spec.faults.gates.size(); ++g) {
    const auto& gate = context.spec.faults.gates[g];
    engine.hold(context.keys.at(gate.request), *context.gates[g], gate.before_page);
  }
}

void run_transfer_steps(transfer_context& context, script_rank& prefill, script_rank& decode,
                        const script_options& options) {
  transfer_steps_run(context, prefill, decode, options).run();
}

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
      "each rank on a host thread of its own that builds, binds and alone calls its core "
      "objects; control messages over loopback TCP; the script hands the ranks its steps as "
      "messages");
  transfer_run run(spec, v, plane, options);
  outcome.findings = run.run();
  outcome.events = run.recorded();
  return outcome;
}

}  // namespace kvsim::real
