#include "real_backend/launch/rank_process.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "real_backend/errors.h"
#include "real_backend/host/host_data_plane.h"
#include "real_backend/launch/process_launch.h"
#include "real_backend/host/rank_thread.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/scripts/script_request.h"
#include "real_backend/launch/step_channel.h"
#include "real_backend/wire/tcp_messenger.h"
#include "real_backend/scripts/transfer_context.h"
#include "real_backend/scripts/transfer_script.h"
#include "real_backend/scripts/transfer_steps.h"

namespace kvsim::real {
namespace {

constexpr auto rank_idle = std::chrono::microseconds(50);
constexpr auto link_patience = std::chrono::milliseconds(20'000);

// What a rank process answers when the script asks for its findings or its events.
struct rank_answers {
  step_link& channel;
  transfer_context& context;
  void findings(std::uint64_t id) const {
    channel.write_line("answer " + std::to_string(id) + " " +
                       findings_to_json(context.findings.findings()));
  }
  void events(std::uint64_t id) const {
    channel.write_line("answer " + std::to_string(id) + " " +
                       events_to_json(context.recording.events()));
  }
};

// Serves the script's steps to `thread` until "stop" (or the script goes away).
template <class Actor>
void serve_until_stop(step_link& channel, const scenarios::scenario_spec& spec,
                      rank_thread<Actor>& thread, const rank_answers& answers) {
  std::map<std::uint64_t, std::shared_ptr<step_signal>> watches;
  for (;;) {
    thread.rethrow_if_failed();
    const std::optional<std::string> line = channel.read_line(std::chrono::milliseconds(20));
    if (!line) continue;
    const script_request request = parse_script_request(*line);
    const std::uint64_t id = request.id;
    if (request.verb == "stop") {
      // Two phases: every rank's thread stops (nobody reads the control plane any more)
      // before any rank process exits and closes its links, which the other's thread would
      // otherwise see as its peer going away.
      thread.stop();
      channel.write_line("answer " + std::to_string(id) + " stopped");
      while (channel.read_line(std::chrono::milliseconds(1000)) != std::optional<std::string>("exit")) {
      }
      return;
    }
    if (request.verb == "cancel") {
      if (auto it = watches.find(id); it != watches.end()) {
        it->second->set();
        watches.erase(it);
      }
      continue;
    }
    if (request.verb == "findings") {
      answers.findings(id);
      continue;
    }
    if (request.verb == "events") {
      answers.events(id);
      continue;
    }
    check_step_index(spec, request.step, request.r);
    const transfer_step step = request.step;
    const std::size_t r = request.r;
    if (request.verb == "ask") {
      const std::string answer = thread.call(
          [step, r](Actor& a) { return run_step(a, step, r); },
          std::chrono::steady_clock::now() + link_patience);
      channel.write_line("answer " + std::to_string(id) + " " + answer);
    } else {
      auto done = std::make_shared<step_signal>();
      watches[id] = done;
      thread.watch(
          [step, r, id, &channel](Actor& a) {
            if (run_step(a, step, r) != "1") return false;
            channel.write_line("fired " + std::to_string(id));
            return true;
          },
          done);
    }
  }
}

}  // namespace

bool started_as_rank_process(const environment& env) { return env(script_fd_variable).has_value(); }

int inherited_fd(const environment& env, const char* name) {
  const std::optional<std::string> text = env(name);
  if (!text || text->empty() || text->find_first_not_of("0123456789") != std::string::npos ||
      text->size() > 9) {
    throw launch_error(std::string("launcher: ") + name + " must name an inherited fd");
  }
  return std::stoi(*text);
}

std::string findings_to_json(const std::vector<real_finding>& findings) {
  nlohmann::json j = nlohmann::json::array();
  for (const real_finding& f : findings) {
    j.push_back({{"invariant", f.invariant},
                 {"message", f.message},
                 {"timing_dependent", f.timing_dependent},
                 {"order", f.order}});
  }
  return j.dump();
}

std::string events_to_json(const std::vector<recorded_event>& events) {
  nlohmann::json j = nlohmann::json::array();
  for (const recorded_event& e : events) j.push_back({{"at_ns", e.at_ns}, {"rank", e.rank}, {"what", e.what}});
  return j.dump();
}

std::vector<recorded_event> events_from_json(const std::string& text) {
  std::vector<recorded_event> out;
  for (const auto& e : nlohmann::json::parse(text)) {
    out.push_back({e.at("at_ns").get<std::uint64_t>(), e.at("rank").get<core::rank_id>(),
                   e.at("what").get<std::string>()});
  }
  return out;
}

std::vector<real_finding> findings_from_json(const std::string& text) {
  std::vector<real_finding> out;
  for (const auto& f : nlohmann::json::parse(text)) {
    out.push_back({f.at("invariant").get<std::string>(), f.at("message").get<std::string>(),
                   f.at("timing_dependent").get<bool>(), f.at("order").get<std::uint64_t>()});
  }
  return out;
}

void serve_decode_rank(const scenarios::scenario_spec& spec, core::variant v,
                       data_plane& plane, const run_secret& secret, tcp_messenger& wire,
                       step_link& link) {
  transfer_context context(spec, v, plane, secret);
  const rank_answers answers{link, context};
  rank_thread<decode_actor> thread(
      "the decode rank's process",
      [&] { return std::make_unique<decode_actor>(context, wire); }, rank_idle);
  link.write_line("ready");
  serve_until_stop(link, spec, thread, answers);
}

int run_rank_process(const scenarios::scenario_spec& spec, core::variant v, const environment& env,
                     std::ostream& err, bool cuda) {
  step_channel channel(inherited_fd(env, script_fd_variable));
  const auto say_failed = [&](const std::string& line) {
    channel.write_line("failed " + line);
    err << "kvsim real: " << line << "\n";
    return 3;
  };
  try {
    const launch_config launch = parse_launch_environment(env);
    if (launch.world_size != 2 || launch.rank > 1) {
      throw launch_error("launcher: a transfer script runs as 2 ranks (prefill 0, decode 1), not " +
                         describe(launch));
    }
    const run_secret secret = resolve_run_secret(launch, env, std::nullopt);
    const std::unique_ptr<data_plane> owned_plane =
        plane_over(cuda ? process_plane::cuda : process_plane::host,
                   shared_region::attach(inherited_fd(env, host_plane_fd_variable)));
    data_plane& plane = *owned_plane;
    tcp_messenger wire(launch.rank, derive_link_key(secret));
    if (launch.rank == decode_rank) {
      wire.listen(launch.master_addr, launch.master_port);
      channel.write_line("listening");
      wire.accept_peers(1, link_patience);
      serve_decode_rank(spec, v, plane, secret, wire, channel);
    } else {
      transfer_context context(spec, v, plane, secret);
      const rank_answers answers{channel, context};
      auto engine = plane.make_transfer_engine(prefill_rank, *context.prefill_pages,
                                               {{decode_rank, context.decode_memory.get()}});
      hold_gated_transfers(context, *engine);
      wire.connect(decode_rank, launch.master_addr, launch.master_port, link_patience);
      {
        rank_thread<prefill_actor> thread(
            "the prefill rank's process",
            [&] { return std::make_unique<prefill_actor>(context, wire, *engine); }, rank_idle);
        channel.write_line("ready");
        serve_until_stop(channel, spec, thread, answers);
      }
      for (auto& g : context.gates) g->open();  // before the engine waits for its copies
    }
    return 0;
  } catch (const std::exception& e) {
    return say_failed(e.what());
  }
}

}  // namespace kvsim::real
