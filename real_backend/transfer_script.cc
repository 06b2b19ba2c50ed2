#include "real_backend/transfer_script.h"

#include <algorithm>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <type_traits>

#include "real_backend/errors.h"
#include "real_backend/rank_thread.h"
#include "real_backend/step_signal.h"
#include "real_backend/tcp_messenger.h"
#include "real_backend/transfer_context.h"
#include "real_backend/transfer_decode.h"
#include "real_backend/transfer_prefill.h"

namespace kvsim::real {
namespace {

using core::room_key;
using clock_type = std::chrono::steady_clock;

// How long a rank's loop waits for work before it polls its endpoints again.
constexpr auto rank_idle = std::chrono::microseconds(50);

// The script: it calls no core object. It hands each step to the rank that takes it and
// waits for that rank to say it is done (a call, or a watched condition): one handshake per
// step, in the order of the scenario.
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
    for (std::size_t g = 0; g < spec.faults.gates.size(); ++g) {
      const auto& gate = spec.faults.gates[g];
      engine_->hold(context_.keys.at(gate.request), *context_.gates[g], gate.before_page);
    }
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
      await_prefill("every request ending on both ranks",
                    [](prefill_actor& p) { return p.all_over(); });
      await_decode("every request ending on both ranks",
                   [](decode_actor& d) { return d.all_ended(); });
    } catch (const stuck&) {
      // Reported as I9; nothing later in the script can happen.
    }
    return context_.findings.findings();
  }

 private:
  struct stuck {};

  // --- the script ----------------------------------------------------------------------
  // A request that starts after `earlier` ended on decode. If it has not, and decode has
  // heard everything said so far, nothing else can move: the held transfer resumes now.
  void wait_for_end_on_decode(std::size_t earlier) {
    await_decode("the control messages in flight being handled",
                 [this](decode_actor&) { return context_.wire.quiet(); });
    if (ask(*decode_, [earlier](decode_actor& d) { return d.ended(earlier); })) return;
    open_held_gates();
    await_end_on_decode(earlier);
  }

  // Decode ends request `r`. Once prefill has nothing of it in flight, only a message can
  // still end it: if none does within the liveness bound, that is I9 and the run stops.
  void await_end_on_decode(std::size_t r) {
    const room_key key = context_.keys[r];
    await(
        "prefill ending " + core::to_string(key), [r](prefill_actor& p) { return p.over(r); },
        [r](decode_actor& d) { return d.ended(r); });
    if (await_within(options_.liveness, [r](decode_actor& d) { return d.ended(r); })) return;
    const bool aborting = ask(*decode_, [r](decode_actor& d) { return d.aborting(r); });
    context_.findings.add(
        "I9: " + core::to_string(key) + " was " +
        (aborting ? "aborted on rank " : "sent to rank ") + std::to_string(decode_rank) +
        " and did not finish there within " + std::to_string(options_.liveness.count()) + " ms (" +
        (aborting ? "drain-ACKs counted: " + context_.watch.counted_text(key) + "; " : "") +
        "prefill's transfer of it has ended)");
    throw stuck{};
  }

  // Decode pre-allocates and publishes; prefill fills its source pages with the request's
  // canary, opens, and sends the chunks once the metadata is in.
  void start(std::size_t r) {
    const room_key key = context_.keys[r];
    const std::string pages = std::to_string(context_.spec.requests[r].pages);
    await_decode("decode pre-allocating " + pages + " pages for " + core::to_string(key),
                 [r](decode_actor& d) { return d.prealloc_and_publish(r); });
    await_prefill("prefill allocating " + pages + " source pages for " + core::to_string(key),
                  [r](prefill_actor& p) { return p.open_request(r); });
    await_prefill("prefill receiving decode's metadata for " + core::to_string(key),
                  [r](prefill_actor& p) { return p.send_when_published(r); });
  }

  // Decode aborts `r` while its gate holds the copy on the device (after the pages before
  // the gate have landed); its transfer stays held while the script goes on.
  void abort_while_held(std::size_t r) {
    const room_key key = context_.keys[r];
    for (std::size_t g = 0; g < context_.spec.faults.gates.size(); ++g) {
      if (context_.spec.faults.gates[g].request != r) continue;
      await_prefill("the transfer of " + core::to_string(key) + " reaching its gate",
                    [g](prefill_actor& p) { return p.check_at_gate(g); });
    }
    ask(*decode_, [r](decode_actor& d) { d.abort(r); });
    ask(*prefill_, [r](prefill_actor& p) { p.hold(r); });
    await_prefill("prefill receiving the ABORT of " + core::to_string(key),
                  [r](prefill_actor& p) { return p.saw_abort(r); });
  }

  void open_held_gates() {
    ask(*prefill_, [](prefill_actor& p) { p.open_held_gates(); });
  }

  // --- handshakes with the rank threads --------------------------------------------------
  clock_type::time_point patience_deadline() const { return clock_type::now() + options_.patience; }

  template <class Actor, class Work>
  std::invoke_result_t<Work&, Actor&> ask(rank_thread<Actor>& rank, Work work) {
    return rank.call(std::move(work), patience_deadline());
  }

  // Waits until `on_prefill` holds on the prefill thread or `on_decode` on the decode thread
  // (either may be empty), at most `within`; false when that passed first.
  bool await_either(std::function<bool(prefill_actor&)> on_prefill,
                    std::function<bool(decode_actor&)> on_decode, clock_type::duration within) {
    auto done = std::make_shared<step_signal>();
    if (on_prefill) prefill_->watch(std::move(on_prefill), done);
    if (on_decode) decode_->watch(std::move(on_decode), done);
    const bool happened = done->wait_until(clock_type::now() + within);
    done->set();  // retires the watches that did not fire
    prefill_->rethrow_if_failed();
    decode_->rethrow_if_failed();
    return happened;
  }

  void await(const std::string& what, std::function<bool(prefill_actor&)> on_prefill,
             std::function<bool(decode_actor&)> on_decode) {
    if (await_either(std::move(on_prefill), std::move(on_decode), options_.patience)) return;
    throw real_backend_error("real run of '" + context_.spec.name + "': " + what +
                             " did not happen within " + std::to_string(options_.patience.count()) +
                             " ms");
  }
  void await_prefill(const std::string& what, std::function<bool(prefill_actor&)> condition) {
    await(what, std::move(condition), {});
  }
  void await_decode(const std::string& what, std::function<bool(decode_actor&)> condition) {
    await(what, {}, std::move(condition));
  }
  bool await_within(std::chrono::milliseconds within,
                    std::function<bool(decode_actor&)> condition) {
    return await_either({}, std::move(condition), within);
  }

  script_options options_;
  transfer_context context_;
  std::unique_ptr<gated_transfer_engine> engine_;
  tcp_messenger prefill_wire_;  // the prefill thread's endpoint once the threads run
  tcp_messenger decode_wire_;   // the decode thread's
  std::unique_ptr<rank_thread<prefill_actor>> prefill_;
  std::unique_ptr<rank_thread<decode_actor>> decode_;
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
      "each rank on a host thread of its own that builds, binds and alone calls its core "
      "objects; control messages over loopback TCP; the script hands the ranks its steps as "
      "messages");
  transfer_run run(spec, v, plane, options);
  outcome.findings = run.run();
  return outcome;
}

}  // namespace kvsim::real
