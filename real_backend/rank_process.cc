#include "real_backend/rank_process.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "real_backend/errors.h"
#include "real_backend/host_data_plane.h"
#include "real_backend/rank_thread.h"
#include "real_backend/run_secret.h"
#include "real_backend/step_channel.h"
#include "real_backend/tcp_messenger.h"
#include "real_backend/transfer_context.h"
#include "real_backend/transfer_script.h"
#include "real_backend/transfer_steps.h"

namespace kvsim::real {
namespace {

constexpr auto rank_idle = std::chrono::microseconds(50);
constexpr auto link_patience = std::chrono::milliseconds(20'000);

int fd_from(const environment& env, const char* name) {
  const std::optional<std::string> text = env(name);
  if (!text || text->empty() || text->find_first_not_of("0123456789") != std::string::npos ||
      text->size() > 9) {
    throw launch_error(std::string("launcher: ") + name + " must name an inherited fd");
  }
  return std::stoi(*text);
}

// Serves the script's steps to `thread` until "stop" (or the parent goes away).
template <class Actor, class Findings, class Events>
void serve_until_stop(step_channel& channel, rank_thread<Actor>& thread,
                      const Findings& answer_findings, const Events& answer_events) {
  std::map<std::uint64_t, std::shared_ptr<step_signal>> watches;
  for (;;) {
    thread.rethrow_if_failed();
    const std::optional<std::string> line = channel.read_line(std::chrono::milliseconds(20));
    if (!line) continue;
    std::istringstream in(*line);
    std::string verb;
    std::uint64_t id = 0;
    std::string step_name;
    std::size_t r = 0;
    in >> verb >> id >> step_name >> r;
    if (verb == "stop") {
      // Two phases: every rank's thread stops (nobody reads the control plane any more)
      // before any rank process exits and closes its links, which the other's thread would
      // otherwise see as its peer going away.
      thread.stop();
      channel.write_line("answer " + std::to_string(id) + " stopped");
      while (channel.read_line(std::chrono::milliseconds(1000)) != std::optional<std::string>("exit")) {
      }
      return;
    }
    if (verb == "cancel") {
      if (auto it = watches.find(id); it != watches.end()) {
        it->second->set();
        watches.erase(it);
      }
      continue;
    }
    if (verb == "findings") {
      answer_findings(id);
      continue;
    }
    if (verb == "events") {
      answer_events(id);
      continue;
    }
    const std::optional<transfer_step> step = transfer_step_named(step_name);
    if (!step) throw real_backend_error("the script sent '" + *line + "'");
    if (verb == "ask") {
      const std::string answer = thread.call(
          [s = *step, r](Actor& a) { return run_step(a, s, r); },
          std::chrono::steady_clock::now() + link_patience);
      channel.write_line("answer " + std::to_string(id) + " " + answer);
    } else if (verb == "watch") {
      auto done = std::make_shared<step_signal>();
      watches[id] = done;
      thread.watch(
          [s = *step, r, id, &channel](Actor& a) {
            if (run_step(a, s, r) != "1") return false;
            channel.write_line("fired " + std::to_string(id));
            return true;
          },
          done);
    } else {
      throw real_backend_error("the script sent '" + *line + "'");
    }
  }
}

}  // namespace

bool started_as_rank_process(const environment& env) { return env(script_fd_variable).has_value(); }

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

int run_rank_process(const scenarios::scenario_spec& spec, core::variant v, const environment& env,
                     std::ostream& err) {
  step_channel channel(fd_from(env, script_fd_variable));
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
    host_data_plane plane(shared_region::attach(fd_from(env, host_plane_fd_variable)));
    transfer_context context(spec, v, plane, secret);
    tcp_messenger wire(launch.rank, derive_link_key(secret));
    const auto answer_findings = [&](std::uint64_t id) {
      channel.write_line("answer " + std::to_string(id) + " " +
                         findings_to_json(context.findings.findings()));
    };
    const auto answer_events = [&](std::uint64_t id) {
      channel.write_line("answer " + std::to_string(id) + " " +
                         events_to_json(context.recording.events()));
    };
    if (launch.rank == decode_rank) {
      wire.listen(launch.master_addr, launch.master_port);
      channel.write_line("listening");
      wire.accept_peers(1, link_patience);
      rank_thread<decode_actor> thread(
          "the decode rank's process",
          [&] { return std::make_unique<decode_actor>(context, wire); }, rank_idle);
      channel.write_line("ready");
      serve_until_stop(channel, thread, answer_findings, answer_events);
    } else {
      auto engine = plane.make_transfer_engine(prefill_rank, *context.prefill_pages,
                                               {{decode_rank, context.decode_memory.get()}});
      hold_gated_transfers(context, *engine);
      wire.connect(decode_rank, launch.master_addr, launch.master_port, link_patience);
      {
        rank_thread<prefill_actor> thread(
            "the prefill rank's process",
            [&] { return std::make_unique<prefill_actor>(context, wire, *engine); }, rank_idle);
        channel.write_line("ready");
        serve_until_stop(channel, thread, answer_findings, answer_events);
      }
      for (auto& g : context.gates) g->open();  // before the engine waits for its copies
    }
    return 0;
  } catch (const std::exception& e) {
    return say_failed(e.what());
  }
}

}  // namespace kvsim::real
