#include "real_backend/launch/prefetch_processes.h"

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>
#include <vector>

#include "real_backend/errors.h"
#include "real_backend/host/event_log.h"
#include "real_backend/host/host_data_plane.h"
#include "real_backend/scripts/prefetch_rank.h"
#include "real_backend/launch/rank_process.h"
#include "real_backend/launch/rank_spawn.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/scripts/script_request.h"
#include "real_backend/host/shared_region.h"
#include "real_backend/launch/step_channel.h"
#include "real_backend/wire/tcp_messenger.h"
#include "real_backend/wire/wire_group.h"
#include "spec/scenario_caps.h"

namespace kvsim::real {
namespace {

using clock_type = std::chrono::steady_clock;

constexpr auto link_patience = std::chrono::milliseconds(20'000);

// What the rank processes share besides the control plane: the counter that orders their
// findings, and where each one's control plane listens (written before it says "listening").
struct prefetch_words {
  std::uint64_t stamps;
  std::uint32_t ports[scenarios::caps::ranks_per_side_max];
};
constexpr std::size_t words_region_bytes = std::size_t{1} << 20;

prefetch_words& words_of(shared_region& region) {
  return *reinterpret_cast<prefetch_words*>(
      region.carve("prefetch", sizeof(prefetch_words)).data());
}

std::vector<core::rank_id> members_of(const scenarios::scenario_spec& spec) {
  std::vector<core::rank_id> members;
  for (core::rank_id r = 0; r < spec.topology.attention_group; ++r) members.push_back(r);
  return members;
}

// Connects to the lower ranks and accepts the higher: every pair linked once, and nobody
// waits for a rank that waits for it (the lowest only accepts).
void link_to_peers(tcp_messenger& wire, const launch_config& launch, std::uint32_t group,
                   prefetch_words& words) {
  for (core::rank_id peer = 0; peer < launch.rank; ++peer) {
    const std::uint32_t port = std::atomic_ref<std::uint32_t>(words.ports[peer]).load();
    if (port == 0 || port > 65535) {
      throw real_backend_error("rank " + std::to_string(peer) + " has not said where it listens");
    }
    wire.connect(peer, launch.master_addr, static_cast<std::uint16_t>(port), link_patience);
  }
  wire.accept_peers(group - 1 - launch.rank, link_patience);
}

// The rank's part on an owner thread of its own, its peers over the wire; then its reads
// landed and its host pages checked. The answer: its counts, as JSON.
std::string run_part(const scenarios::scenario_spec& spec, core::variant v, prefetch_rank& me,
                     tcp_messenger& wire, event_log& log, std::chrono::milliseconds patience) {
  wire_group group(0, members_of(spec), wire, patience);
  std::string error;
  std::thread owner([&] {
    try {
      me.run(v, group, log);
    } catch (const std::exception& e) {
      error = e.what();
    }
    try {
      group.finished();  // also after a failure: no peer waits for this rank in vain
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  });
  owner.join();
  if (!error.empty()) throw real_backend_error("rank " + std::to_string(me.rank()) + ": " + error);
  me.settle_and_check();
  return nlohmann::json{{"barrier_entries", group.barrier_entries()},
                        {"host_page_frees", me.host_page_frees()}}
      .dump();
}

void serve_rank(const scenarios::scenario_spec& spec, core::variant v, const launch_config& launch,
                const run_secret& secret, prefetch_words& words, step_link& channel) {
  finding_log findings;
  findings.stamp_from(&words.stamps);
  host_data_plane plane;  // this rank's host pages, storage and gates: its own memory
  event_log log;
  event_recorder recording;
  prefetch_rank me(spec, launch.rank, plane, findings);
  log.observe([&me](const core::event& e) { me.observe(e); });
  recording.attach(log);
  tcp_messenger wire(launch.rank, derive_link_key(secret));
  wire.accept_collectives();
  const std::uint16_t port = wire.listen(launch.master_addr, 0);
  std::atomic_ref<std::uint32_t>(words.ports[launch.rank]).store(port);
  channel.write_line("listening");
  for (;;) {
    const std::optional<std::string> line = channel.read_line(std::chrono::milliseconds(1000));
    if (!line) continue;
    const script_request request = parse_script_request(*line, served_script::prefetch);
    const std::string answer = "answer " + std::to_string(request.id) + " ";
    if (request.verb == "connect") {
      link_to_peers(wire, launch, spec.topology.attention_group, words);
      channel.write_line(answer + "linked");
    } else if (request.verb == "run") {
      channel.write_line(answer + run_part(spec, v, me, wire, log, script_options{}.patience));
    } else if (request.verb == "findings") {
      channel.write_line(answer + findings_to_json(findings.findings()));
    } else if (request.verb == "events") {
      channel.write_line(answer + events_to_json(recording.events()));
    } else {  // stop: nothing runs any more; exit once told, when every rank has stopped
      channel.write_line(answer + "stopped");
      while (channel.read_line(std::chrono::milliseconds(1000)) !=
             std::optional<std::string>("exit")) {
      }
      return;
    }
  }
}

// `verb` asked of every rank at once (they meet each other while they answer); the answers
// in rank order, or the first failure once every rank has answered or given up.
std::vector<std::string> on_every_rank(std::vector<spawned_rank>& ranks, const std::string& verb,
                                       clock_type::time_point deadline) {
  std::vector<std::future<std::string>> answers;
  for (spawned_rank& r : ranks) {
    answers.push_back(std::async(
        std::launch::async, [&r, &verb, deadline] { return r.rank->request(verb, deadline); }));
  }
  // The first rank to fail releases the others' waits (a rank that died must not leave the
  // run waiting out the patience of the peers linking to it).
  std::vector<std::string> out(ranks.size());
  std::vector<bool> done(ranks.size(), false);
  std::string failure;
  for (std::size_t left = ranks.size(); left > 0;) {
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      if (done[k] ||
          answers[k].wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) {
        continue;
      }
      done[k] = true;
      --left;
      try {
        out[k] = answers[k].get();
      } catch (const std::exception& e) {
        if (failure.empty()) {
          failure = e.what();
          for (spawned_rank& r : ranks) r.rank->abandon(failure);
        }
      }
    }
  }
  if (!failure.empty()) throw real_backend_error(failure);
  return out;
}

}  // namespace

real_outcome run_prefetch_processes(const scenarios::scenario_spec& spec,
                                    const std::string& variant_name, const script_options& options,
                                    prefetch_counts* counts) {
  const std::uint32_t group = spec.topology.attention_group;
  shared_region shared = shared_region::create(words_region_bytes);
  (void)words_of(shared);  // placed before any rank looks for it
  const run_secret secret = draw_run_secret();
  std::vector<spawned_rank> ranks(group);
  std::vector<std::vector<real_finding>> findings;
  std::vector<std::vector<recorded_event>> events;
  std::vector<std::string> parts;
  std::string failure;
  try {
    for (core::rank_id k = 0; k < group; ++k) {
      ranks[k] = spawn_rank_process("rank " + std::to_string(k) + "'s process",
                                    {k, group, 0, shared.fd()}, secret);
    }
    std::vector<spawned_rank*> run;
    for (spawned_rank& r : ranks) run.push_back(&r);
    for (spawned_rank& r : ranks) await_word(run, r, "listening", rank_start_patience);
    for (spawned_rank& r : ranks) r.rank->serve();
    (void)on_every_rank(ranks, "connect", clock_type::now() + rank_start_patience);
    // Each rank gives up on a collective after `patience`; this only backs that up.
    const auto collectives = static_cast<int>(2 * spec.requests.size() + 1);
    parts = on_every_rank(ranks, "run", clock_type::now() + collectives * options.patience);
    const auto deadline = clock_type::now() + options.patience;
    for (spawned_rank& r : ranks) {
      findings.push_back(findings_from_json(r.rank->request("findings", deadline)));
      events.push_back(events_from_json(r.rank->request("events", deadline)));
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  std::vector<std::string> notes;
  std::vector<spawned_rank*> started;
  for (core::rank_id k = 0; k < group; ++k) {
    notes.push_back("rank " + std::to_string(k) + " (" +
                    core::to_string(spec.faults.prefetch_states.at(k)) + ") in process " +
                    std::to_string(ranks[k].pid) +
                    ", its coordinator built, bound and alone called by a thread of its own, its "
                    "host pages and storage reads in its own memory");
    started.push_back(&ranks[k]);
  }
  end_rank_processes(started, failure);
  if (!failure.empty()) throw real_backend_error(failure);
  if (counts != nullptr) {
    for (core::rank_id k = 0; k < group; ++k) {
      const nlohmann::json part = nlohmann::json::parse(parts.at(k));
      counts->barrier_entries[k] = part.at("barrier_entries").get<std::uint32_t>();
      counts->host_page_frees[k] = part.at("host_page_frees").get<std::uint32_t>();
    }
  }
  notes.push_back(
      "collectives: every entry sent to every peer over loopback TCP (links "
      "authenticated with a run key drawn for this run, frames sealed), each rank "
      "combining the values itself; a wait gives up after " +
      std::to_string(script_options{}.patience.count()) + " ms as I5");
  return processes_outcome(spec.name, variant_name, "host", std::move(notes), findings, events);
}

int run_prefetch_rank_process(const scenarios::scenario_spec& spec, core::variant v,
                              const environment& env, std::ostream& err) {
  step_channel channel(inherited_fd(env, script_fd_variable));
  try {
    const launch_config launch = parse_launch_environment(env);
    if (launch.world_size != spec.topology.attention_group) {
      throw launch_error("launcher: scenario " + spec.name + "'s attention group has " +
                         std::to_string(spec.topology.attention_group) + " ranks, not " +
                         describe(launch));
    }
    const run_secret secret = resolve_run_secret(launch, env, std::nullopt);
    shared_region shared = shared_region::attach(inherited_fd(env, host_plane_fd_variable));
    serve_rank(spec, v, launch, secret, words_of(shared), channel);
    return 0;
  } catch (const std::exception& e) {
    channel.write_line(std::string("failed ") + e.what());
    err << "kvsim real: " << e.what() << "\n";
    return 3;
  }
}

}  // namespace kvsim::real
