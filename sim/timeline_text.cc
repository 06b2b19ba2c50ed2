// The text timeline (sim/timeline_export.h): a header (with a legend of the run's requests
// where they are known), the run one event per line, the finding with its evidence, and the
// history of each page it involves; every line names the requests it mentions.
#include <algorithm>
#include <set>

#include "sim/event_phrase.h"
#include "spec/one_line.h"
#include "sim/page_history.h"
#include "sim/timeline_export.h"

namespace kvsim::sim {
namespace {

constexpr const char* continuation = "      ";

// `line` broken at spaces into lines of at most text_line_cap characters, continuation lines
// indented; a word longer than a line is cut.
void add_wrapped(std::string& out, std::string line) {
  line = spec::one_line(line);
  while (line.size() > text_line_cap) {
    std::size_t cut = line.rfind(' ', text_line_cap);
    const std::size_t indent = std::string(continuation).size();
    if (cut == std::string::npos || cut <= indent) cut = text_line_cap;
    out += line.substr(0, cut) + '\n';
    const std::size_t rest = line[cut] == ' ' ? cut + 1 : cut;
    line = continuation + line.substr(rest);
  }
  out += line + '\n';
}

// One line, cut with "..." where it would pass the cap.
std::string cut_to_cap(std::string line) {
  line = spec::one_line(line);
  if (line.size() > text_line_cap) line = line.substr(0, text_line_cap - 3) + "...";
  return line;
}

std::string finding_line(const finding& found) {
  // A checker's message usually starts with its invariant ("I3: ..."); say it once.
  return found.message.starts_with(found.invariant) ? found.message
                                                     : found.invariant + ": " + found.message;
}

std::string where(const sim_event& e, const std::vector<actor_name>& actors) {
  return "step " + std::to_string(e.step) + " t=" + std::to_string(e.time_us) + "us " +
         actor_text(e.actor, actors) + ": ";
}

// Steps first..last had a scheduling decision and nothing else.
void add_quiet_steps(std::string& out, std::uint64_t first, std::uint64_t last) {
  if (first > last) return;
  if (first == last) {
    out += "step " + std::to_string(first) + ": a scheduling decision only, no events\n";
  } else {
    out += "steps " + std::to_string(first) + ".." + std::to_string(last) +
           ": scheduling decisions only, no events (" + std::to_string(last - first + 1) +
           " steps)\n";
  }
}

// "  request 35: room 4/gen 2, 2 pages, arrives t=35us, abort anytime", a line per request.
// A batch world (concurrency above 1) serves each request on each rank by an actor of its own.
void add_requests(std::string& out, const std::vector<timeline_request>& requests,
                  const std::vector<actor_name>& actors) {
  if (requests.empty()) return;
  const bool request_actors = std::any_of(actors.begin(), actors.end(),
                                          [](const actor_name& a) { return a.role == "request"; });
  add_wrapped(out, "requests: " + std::to_string(requests.size()) +
                       " by their index in the scenario; lines name each \"request N (room R/gen "
                       "G)\"" +
                       (request_actors ? "; rK.request.N serves request N on rank K" : ""));
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const timeline_request& r = requests[i];
    std::string line = "  request " + std::to_string(i) + ": " + core::to_string(r.key) + ", " +
                       std::to_string(r.pages) + (r.pages == 1 ? " page" : " pages");
    if (r.arrive_at_us) line += ", arrives t=" + std::to_string(*r.arrive_at_us) + "us";
    if (!r.abort.empty()) line += ", abort " + r.abort;
    add_wrapped(out, line);
  }
}

void add_header(std::string& out, const timeline_run& run, const std::vector<sim_event>& events,
                const std::vector<actor_name>& actors, std::uint64_t steps,
                const std::optional<finding>& found, const request_names& names) {
  add_wrapped(out, "kvsim timeline: scenario " + (run.scenario.empty() ? "?" : run.scenario) +
                       ", variant " + (run.variant.empty() ? "?" : run.variant) + ", strategy " +
                       (run.strategy.empty() ? "?" : run.strategy) + ", seed " +
                       std::to_string(run.seed) + ", checkers " + run.checkers);
  add_wrapped(out, "faults: " + (run.faults.empty() ? std::string("(not given)") : run.faults));
  const std::uint64_t last_us = events.empty() ? 0 : events.back().time_us;
  add_wrapped(out, "run: " + std::to_string(run.decisions) + " decisions, steps 0.." +
                       std::to_string(steps) + ", " + std::to_string(events.size()) +
                       " events, virtual time 0.." + std::to_string(last_us) + "us");
  add_wrapped(out, "time: t= is virtual time in microseconds (us); step = schedule decisions "
                   "taken before the event (0: the world's setup)");
  out += found ? cut_to_cap("finding: " + names.name_in(finding_line(*found))) + "\n"
               : "finding: none\n";
  add_wrapped(out, "lines: step S t=Tus ACTOR: what happened; [evidence] marks the events "
                   "that prove the finding; the finding and its pages' histories follow the run");
  add_requests(out, run.requests, actors);
}

void add_finding(std::string& out, const std::vector<sim_event>& events,
                 const std::vector<actor_name>& actors, const event_phrases& phrases,
                 const finding& found, const request_names& names) {
  out += "\nfinding " + spec::one_line(found.invariant) + "\n";
  add_wrapped(out, "  " + names.name_in(finding_line(found)));
  if (!found.details.empty()) {
    out += "details:\n";
    for (const std::string& line : found.details) add_wrapped(out, "  " + names.name_in(line));
  }
  out += "evidence (the steps that prove it):\n";
  if (found.evidence.empty()) out += "  none cited\n";
  for (const std::size_t i : found.evidence) {
    if (i >= events.size()) continue;
    add_wrapped(out, "  " + names.name_in(where(events[i], actors) + phrases.phrase(i)));
  }
  const std::vector<page_ref> pages = finding_pages(events, found);
  if (pages.empty()) {
    out += "pages the finding involves: none named by its evidence\n";
    return;
  }
  out += "pages the finding involves (what happened to each):\n";
  for (const page_ref& page : pages) {
    out += to_string(page) + ":\n";
    for (const page_moment& m : page_history(events, page)) {
      add_wrapped(out, "  " + names.name_in(where(events[m.event], actors) + m.what));
    }
  }
}

}  // namespace

std::string text_timeline(const timeline_run& run, const std::vector<sim_event>& events,
                          const std::vector<actor_name>& actors,
                          const std::optional<finding>& found) {
  const std::uint64_t steps = std::max(run.steps, events.empty() ? 0 : events.back().step);
  std::set<std::size_t> evidence;
  if (found) evidence.insert(found->evidence.begin(), found->evidence.end());
  const event_phrases phrases(events, actors);
  const request_names names(request_keys(run.requests));

  std::string out;
  add_header(out, run, events, actors, steps, found, names);
  out += '\n';
  std::uint64_t next_step = 0;  // the first step not yet accounted for
  for (std::size_t i = 0; i < events.size(); ++i) {
    const sim_event& e = events[i];
    if (e.step > next_step) add_quiet_steps(out, next_step, e.step - 1);
    next_step = std::max(next_step, e.step + 1);
    add_wrapped(out, names.name_in(where(e, actors) + phrases.phrase(i)) +
                         (evidence.contains(i) ? "  [evidence]" : ""));
  }
  add_quiet_steps(out, next_step, steps);
  if (found) {
    add_finding(out, events, actors, phrases, *found, names);
  } else {
    out += "\nno finding\n";
  }
  return out;
}

}  // namespace kvsim::sim
