#include "tests/sim/timeline_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/event_phrase.h"
#include "sim/page_history.h"

namespace kvsim::sim::timeline_checks {
namespace {

using nlohmann::json;
using thread_key = std::pair<std::uint64_t, std::uint64_t>;  // pid, tid

struct interval {
  double start = 0;
  double end = 0;
  std::size_t index = 0;
};

std::string id_text(const json& e) { return e.contains("id") ? e["id"].dump() : ""; }

// One pass over a trace's events, then the checks of what must hold once all are read.
class trace_validator {
 public:
  explicit trace_validator(const json& events) : events_(events) {}

  std::vector<std::string> problems() {
    for (std::size_t i = 0; i < events_.size(); ++i) read(i);
    check_ends();
    check_nesting();
    check_flow_points();
    check_names();
    return std::move(problems_);
  }

 private:
  void problem(std::size_t i, const std::string& text) {
    problems_.push_back("event " + std::to_string(i) + ": " + text);
  }

  // The fields every event needs: a string name and phase, unsigned pid and tid, a numeric ts.
  bool complete(std::size_t i, const json& e) {
    if (!e.is_object()) {
      problem(i, "not an object");
      return false;
    }
    bool complete = true;
    for (const char* key : {"name", "ph"}) {
      if (!e.contains(key) || !e[key].is_string()) {
        problem(i, std::string("no string ") + key);
        complete = false;
      }
    }
    for (const char* key : {"pid", "tid"}) {
      if (!e.contains(key) || !e[key].is_number_unsigned()) {
        problem(i, std::string("no unsigned ") + key);
        complete = false;
      }
    }
    if (!e.contains("ts") || !e["ts"].is_number()) {
      problem(i, "no numeric ts");
      complete = false;
    }
    return complete;
  }

  void read(std::size_t i) {
    const json& e = events_[i];
    if (!complete(i, e)) return;
    const std::string ph = e["ph"];
    const std::string name = e["name"];
    const thread_key thread{e["pid"], e["tid"]};
    const double ts = e["ts"];
    if (ph == "M") {
      const bool named = e.contains("args") && e["args"].contains("name") && e["args"]["name"].is_string();
      if (name == "process_name" && named) named_pids_.insert(thread.first);
      if (name == "thread_name" && named) named_threads_.insert(thread);
      if (!named) problem(i, "metadata without args.name");
      return;
    }
    used_pids_.insert(thread.first);
    used_threads_.insert(thread);
    check_time(i, e, thread, ts);
    const bool needs_id = ph == "b" || ph == "e" || ph == "n" || ph == "s" || ph == "t" || ph == "f";
    if (needs_id && (!e.contains("id") || !e.contains("cat") || !e["cat"].is_string())) {
      problem(i, "phase " + ph + " without id and cat");
      return;
    }
    if (ph == "B" || ph == "E" || ph == "X") {
      read_slice(i, e, ph, thread, ts);
    } else if (ph == "i" || ph == "I") {
      if (e.contains("s") && e["s"] != "t" && e["s"] != "p" && e["s"] != "g") {
        problem(i, "instant with an unknown scope");
      }
    } else if (ph == "b" || ph == "e" || ph == "s" || ph == "f") {
      read_arrow(i, e, ph, name, thread, ts);
    } else if (ph != "n" && ph != "t") {
      problem(i, "unknown phase " + ph);
    }
  }

  // On virtual time: in order over the whole trace and on each thread, and an event of the
  // log sits within its own virtual microsecond.
  void check_time(std::size_t i, const json& e, const thread_key& thread, double ts) {
    if (ts < last_any_ts_) problem(i, "ts goes back in the trace");
    last_any_ts_ = std::max(last_any_ts_, ts);
    if (e.contains("args") && e["args"].contains("time_us") && e["args"]["time_us"].is_number() &&
        std::floor(ts) != e["args"]["time_us"].get<double>()) {
      problem(i, "ts is not the event's virtual time");
    }
    if (const auto last = last_ts_.find(thread); last != last_ts_.end() && ts < last->second) {
      problem(i, "ts goes back on its thread");
    }
    last_ts_[thread] = ts;
  }

  void read_slice(std::size_t i, const json& e, const std::string& ph, const thread_key& thread,
                  double ts) {
    if (ph == "B") {
      open_slices_[thread].push_back(i);
    } else if (ph == "E") {
      auto& open = open_slices_[thread];
      if (open.empty()) {
        problem(i, "E without a B on its thread");
        return;
      }
      const json& begin = events_[open.back()];
      if (begin["name"] != e["name"]) problem(i, "E named differently from its B");
      slices_[thread].push_back({begin["ts"].get<double>(), ts, open.back()});
      open.pop_back();
    } else if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
      problem(i, "X without a duration");
    } else {
      slices_[thread].push_back({ts, ts + e["dur"].get<double>(), i});
    }
  }

  // Async slices (b/e) and flow arrows (s/f).
  void read_arrow(std::size_t i, const json& e, const std::string& ph, const std::string& name,
                  const thread_key& thread, double ts) {
    if (ph == "b") {
      open_async_[{e["cat"], id_text(e)}].push_back(name);
    } else if (ph == "e") {
      auto& open = open_async_[{e["cat"], id_text(e)}];
      if (open.empty() || open.back() != name) {
        problem(i, "async e without its b");
        return;
      }
      open.pop_back();
    } else if (ph == "s") {
      if (!flow_starts_.try_emplace({e["cat"], id_text(e), name}, ts).second) {
        problem(i, "a second flow start with one id");
      }
      flow_points_.emplace_back(thread, i);
    } else {
      const auto start = flow_starts_.find({e["cat"], id_text(e), name});
      if (start == flow_starts_.end() || start->second > ts) problem(i, "flow end without an earlier start");
      if (!flow_ends_.insert({e["cat"], id_text(e), name}).second) problem(i, "a second flow end with one id");
      if (e.contains("bp") && e["bp"] != "e") problem(i, "flow end binds to an unknown point");
      flow_points_.emplace_back(thread, i);
    }
  }

  void check_ends() {
    for (const auto& [thread, open] : open_slices_) {
      for (const std::size_t i : open) problem(i, "B never ended");
    }
    for (const auto& [key, open] : open_async_) {
      if (!open.empty()) problems_.push_back("async " + key.first + " " + key.second + " never ended");
    }
    for (const auto& [flow, ts] : flow_starts_) {
      if (!flow_ends_.contains(flow)) {
        problems_.push_back("flow " + std::get<0>(flow) + " " + std::get<1>(flow) + " never ended");
      }
    }
  }

  // Sorted by start (outer first on a tie), every slice ends within the one open around it.
  void check_nesting() {
    for (auto& [thread, list] : slices_) {
      std::sort(list.begin(), list.end(), [](const interval& a, const interval& b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
      });
      std::vector<interval> stack;
      for (const interval& slice : list) {
        while (!stack.empty() && stack.back().end <= slice.start) stack.pop_back();
        if (!stack.empty() && slice.end > stack.back().end) {
          problem(slice.index, "overlaps slice of event " + std::to_string(stack.back().index) +
                                   " without nesting in it");
        }
        stack.push_back(slice);
      }
    }
  }

  // Perfetto binds a flow point to the slice around it on its thread: there must be one.
  void check_flow_points() {
    for (const auto& [thread, i] : flow_points_) {
      const double ts = events_[i]["ts"];
      const auto& list = slices_[thread];
      if (std::none_of(list.begin(), list.end(),
                       [&](const interval& slice) { return slice.start <= ts && ts <= slice.end; })) {
        problem(i, "flow point outside every slice of its thread");
      }
    }
  }

  void check_names() {
    for (const std::uint64_t pid : used_pids_) {
      if (!named_pids_.contains(pid)) problems_.push_back("pid " + std::to_string(pid) + " has no process_name");
    }
    for (const thread_key& thread : used_threads_) {
      if (!named_threads_.contains(thread)) {
        problems_.push_back("tid " + std::to_string(thread.second) + " has no thread_name");
      }
    }
  }

  const json& events_;
  std::vector<std::string> problems_;
  std::map<thread_key, std::vector<std::size_t>> open_slices_;  // B events by thread
  std::map<thread_key, std::vector<interval>> slices_;
  std::map<thread_key, double> last_ts_;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> open_async_;
  std::map<std::tuple<std::string, std::string, std::string>, double> flow_starts_;
  std::set<std::tuple<std::string, std::string, std::string>> flow_ends_;
  std::vector<std::pair<thread_key, std::size_t>> flow_points_;
  std::set<std::uint64_t> named_pids_;
  std::set<std::uint64_t> used_pids_;
  std::set<thread_key> named_threads_;
  std::set<thread_key> used_threads_;
  double last_any_ts_ = 0;
};

}  // namespace

std::vector<std::string> trace_problems(const json& trace) {
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    return {"no traceEvents array"};
  }
  std::vector<std::string> header;
  if (!trace.contains("displayTimeUnit") || !trace["displayTimeUnit"].is_string()) {
    header.push_back("no displayTimeUnit");
  }
  std::vector<std::string> problems = trace_validator(trace["traceEvents"]).problems();
  header.insert(header.end(), problems.begin(), problems.end());
  return header;
}

namespace {

bool has_line_in(const std::vector<std::string>& lines, const std::string& start) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.starts_with(start); });
}

// The end of the text timeline: "no finding", or the finding's section (the finding, each
// piece of evidence, each page it involves).
void finding_section_problems(const std::string& text, const std::vector<std::string>& lines,
                              const std::vector<sim_event>& events, const std::optional<finding>& found,
                              const request_names& names, std::vector<std::string>& problems) {
  const auto has_line = [&](const std::string& start) { return has_line_in(lines, start); };
  if (!found) {
    if (!has_line("no finding")) problems.push_back("no 'no finding' at the end");
    return;
  }
  if (!has_line("finding " + found->invariant)) problems.push_back("no finding section");
  if (text.find("\n  " + names.name_in(found->message).substr(0, 60)) == std::string::npos) {
    problems.push_back("the finding's message is missing");
  }
  if (!has_line("evidence (the steps that prove it):")) problems.push_back("no evidence section");
  for (const std::size_t i : found->evidence) {
    if (i < events.size() && !has_line("  step " + std::to_string(events[i].step) + " t=" +
                                       std::to_string(events[i].time_us) + "us")) {
      problems.push_back("evidence " + std::to_string(i) + " not shown");
    }
  }
  for (const page_ref& page : finding_pages(events, *found)) {
    if (!has_line(to_string(page) + ":")) problems.push_back("no history of " + to_string(page));
  }
}

// The legend line of request `index`, as the header gives it.
std::string legend_line(std::size_t index, const timeline_request& r) {
  std::string line = "  request " + std::to_string(index) + ": " + core::to_string(r.key) + ", " +
                     std::to_string(r.pages) + (r.pages == 1 ? " page" : " pages");
  if (r.arrive_at_us) line += ", arrives t=" + std::to_string(*r.arrive_at_us) + "us";
  if (!r.abort.empty()) line += ", abort " + r.abort;
  return line;
}

// Lines with their wrapped continuations joined back on.
std::vector<std::string> unwrapped(const std::vector<std::string>& lines) {
  const std::string continuation = "      ";
  std::vector<std::string> out;
  for (const std::string& line : lines) {
    if (line.starts_with(continuation) && !out.empty()) {
      out.back() += " " + line.substr(continuation.size());
    } else {
      out.push_back(line);
    }
  }
  return out;
}

// Where the run's requests are known: the legend lists each once, and no line mentions a
// known request's key without its name ("request N (room R/gen G)", "(request N, room R/gen
// G)", "request N's (...)"; a later mention on the line is the name alone, without the key).
// Where none are known: no legend.
void request_problems(const std::vector<std::string>& lines, const timeline_run& run,
                      const request_names& names, std::vector<std::string>& problems) {
  const auto has_line = [&](const std::string& start) { return has_line_in(lines, start); };
  if (run.requests.empty()) {
    if (has_line("requests: ")) problems.push_back("a requests legend with no requests known");
    return;
  }
  if (!has_line("requests: " + std::to_string(run.requests.size()) + " by their index")) {
    problems.push_back("no requests legend");
  }
  const std::regex legend_entry(R"(^  request \d+: .*)");
  const auto listed = std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
    return std::regex_match(l, legend_entry);
  });
  if (static_cast<std::size_t>(listed) != run.requests.size()) {
    problems.push_back(std::to_string(listed) + " legend lines for " +
                       std::to_string(run.requests.size()) + " requests");
  }
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    const std::string entry = legend_line(i, run.requests[i]);
    if (std::find(lines.begin(), lines.end(), entry) == lines.end()) {
      problems.push_back("not in the legend: " + entry);
    }
  }
  const std::regex mention(R"(room (\d{1,19})/gen (\d{1,9})\b)");
  for (const std::string& line : unwrapped(lines)) {
    for (auto it = std::sregex_iterator(line.begin(), line.end(), mention);
         it != std::sregex_iterator(); ++it) {
      const core::room_key key{std::stoull((*it)[1]),
                               static_cast<core::generation_t>(std::stoul((*it)[2]))};
      const std::optional<std::size_t> index = names.index_of(key);
      if (!index) continue;
      const std::string before = line.substr(0, static_cast<std::size_t>(it->position()));
      const std::string name = "request " + std::to_string(*index);
      const bool named = before.ends_with(name + " (") || before.ends_with(name + ", ") ||
                         before.ends_with(name + "'s (") || before.ends_with(name + "'s, ") ||
                         before.ends_with(name + ": ");
      if (!named) problems.push_back(core::to_string(key) + " not named " + name + ": " + line);
    }
  }
}

}  // namespace

std::vector<std::string> text_problems(const std::string& text, const std::vector<sim_event>& events,
                                       const timeline_run& run, const std::optional<finding>& found) {
  std::vector<std::string> problems;
  const std::vector<std::string> lines = lines_of(text);
  const auto has_line = [&](const std::string& start) { return has_line_in(lines, start); };
  const std::string title = "kvsim timeline: scenario " + run.scenario + ", variant " +
                            run.variant + ", strategy " + run.strategy + ", seed " +
                            std::to_string(run.seed);
  if (lines.empty() || !lines[0].starts_with(title)) problems.push_back("no title: " + title);
  if (!has_line("faults: " + run.faults.substr(0, 40))) problems.push_back("no faults line");
  if (!has_line("run: " + std::to_string(run.decisions) + " decisions")) {
    problems.push_back("no run line with the decisions");
  }
  if (!has_line("time: t= is virtual time in microseconds")) problems.push_back("no time unit");
  if (!found && !has_line("finding: none")) problems.push_back("no 'finding: none'");
  if (found && !has_line("finding: " + found->invariant)) problems.push_back("no finding line");

  const std::regex event_line(R"(^step (\d+) t=(\d+)us [^ ]+: .+)");
  const std::regex quiet_step(R"(^step (\d+): .*no events.*)");
  const std::regex quiet_steps(R"(^steps (\d+)\.\.(\d+): .*no events.*)");
  std::set<std::string> packed_ids;
  for (const sim_event& e : events) {
    std::visit(
        [&](const auto& body) {
          if constexpr (requires { body.transfer; }) {
            if (body.transfer > 0xffffffffu) packed_ids.insert(std::to_string(body.transfer));
          }
        },
        e.body);
  }
  const std::regex number(R"(\d+)");
  std::set<std::uint64_t> covered;
  std::size_t next_event = 0;
  for (const std::string& line : lines) {
    if (line.size() > text_line_cap) {
      problems.push_back("line over " + std::to_string(text_line_cap) + " chars: " + line);
    }
    for (auto it = std::sregex_iterator(line.begin(), line.end(), number);
         it != std::sregex_iterator(); ++it) {
      if (packed_ids.contains(it->str())) problems.push_back("a packed transfer id: " + line);
    }
    std::smatch m;
    if (std::regex_match(line, m, event_line)) {
      const std::uint64_t step = std::stoull(m[1]);
      if (next_event >= events.size() || events[next_event].step != step ||
          events[next_event].time_us != std::stoull(m[2])) {
        problems.push_back("event line out of step with the log: " + line);
      }
      ++next_event;
      covered.insert(step);
    } else if (std::regex_match(line, m, quiet_step)) {
      covered.insert(std::stoull(m[1]));
    } else if (std::regex_match(line, m, quiet_steps)) {
      for (std::uint64_t s = std::stoull(m[1]); s <= std::stoull(m[2]); ++s) covered.insert(s);
    }
  }
  if (next_event != events.size()) {
    problems.push_back(std::to_string(next_event) + " event lines for " +
                       std::to_string(events.size()) + " events");
  }
  const std::uint64_t steps = std::max(run.steps, events.empty() ? 0 : events.back().step);
  for (std::uint64_t s = 0; s <= steps; ++s) {
    if (!covered.contains(s)) problems.push_back("step " + std::to_string(s) + " unaccounted");
  }
  if (covered.size() != steps + 1) problems.push_back("steps past the run's end");

  const request_names names(request_keys(run.requests));
  finding_section_problems(text, lines, events, found, names, problems);
  request_problems(lines, run, names, problems);
  return problems;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace kvsim::sim::timeline_checks
