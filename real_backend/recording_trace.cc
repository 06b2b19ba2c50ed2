#include "real_backend/recording_trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <system_error>

#include "real_backend/scripts/scenario_ranks.h"
#include "spec/catalogue.h"
#include "spec/fault_kinds.h"
#include "spec/trace_format.h"

namespace kvsim::real {
namespace {

// The actor a rank's core events are logged under, named as the simulator names its actors
// (r1.decode.0): a transfer's prefill and decode, a HiCache case's per-rank schedulers.
std::string role_of(const scenarios::scenario_spec& spec, core::rank_id rank) {
  if (spec.kind != scenarios::scenario_kind::transfer) return "scheduler";
  return rank == 0 ? "prefill" : "decode";
}

std::string errno_text(int error) { return std::generic_category().message(error); }

std::string shown(const std::filesystem::path& path) { return path.string(); }

}  // namespace

nlohmann::json recording_json(const scenarios::scenario_spec& spec, const real_outcome& outcome) {
  using nlohmann::json;
  json actors = json::array();
  for (std::uint32_t rank = 0; rank < ranks_of(spec); ++rank) {
    actors.push_back({{"id", rank}, {"rank", rank}, {"role", role_of(spec, rank)}, {"index", 0}});
  }
  json events = json::array();
  const std::uint64_t start_ns = outcome.events.empty() ? 0 : outcome.events.front().at_ns;
  for (std::size_t i = 0; i < outcome.events.size(); ++i) {
    const recorded_event& e = outcome.events[i];
    // As the simulator writes its log (spec/trace_format.h): the step counts the events, the
    // time is host time since the first.
    const std::uint64_t at_us = (e.at_ns - std::min(e.at_ns, start_ns)) / 1000;
    events.push_back(spec::event_line_prefix(i + 1, at_us,
                                             spec::actor_label(e.rank, role_of(spec, e.rank), 0)) +
                     std::string(spec::to_string(spec::event_kind::core_decided)) + " " + e.what);
  }
  json finding = nullptr;
  if (!outcome.findings.empty()) {
    const real_finding& first = outcome.findings.front();
    json details = json::array();
    if (first.timing_dependent) details.push_back("timing-dependent: found under a wall-clock bound");
    for (std::size_t i = 1; i < outcome.findings.size(); ++i) {
      details.push_back("also: " + outcome.findings[i].message);
    }
    finding = {{"invariant", first.invariant},
               {"message", first.message},
               {"evidence", json::array()},
               {"details", std::move(details)}};
  }
  json faults = json::object();
  // A real run injects no fault: every kind at 0, named as a trace names it.
  for (const spec::fault_kind_row& row : spec::fault_kinds) {
    if (spec::named_in_trace(row, 0)) faults[std::string(row.trace_name)] = 0;
  }
  return json{{"format", spec::trace_format_name},
              {"version", spec::trace_format_version},
              {"kvsim_version", KVSIM_VERSION},
              {"origin", "real"},
              {"backend", outcome.backend},
              {"scenario", scenarios::to_json(spec)},
              {"variant", outcome.variant},
              {"strategy", "real"},
              {"seed", "1"},
              {"fault_profile", std::move(faults)},
              // The hash of no decisions, which the reader checks against the empty list.
              {"decision_hash", spec::hex16(spec::decision_hash_basis)},
              {"actors", std::move(actors)},
              {"decisions", json::array()},
              {"steps", outcome.events.size()},
              {"events", std::move(events)},
              {"finding", std::move(finding)}};
}

void check_recording_path(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.empty()) throw recording_error("--trace needs a file name");
  // As kvsim's own --trace: a trace is written whole to a file, never to standard output.
  if (path == "-") throw recording_error("--trace writes a file, not standard output ('-')");
  if (std::filesystem::is_directory(path, ec)) {
    throw recording_error("--trace " + shown(path) + ": is a directory");
  }
  const std::filesystem::path dir =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (!std::filesystem::is_directory(dir, ec)) {
    throw recording_error("--trace " + shown(path) + ": no such directory " + shown(dir));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw recording_error("--trace " + shown(path) + ": cannot write in " + shown(dir) + " (" +
                          errno_text(errno) + ")");
  }
}

void write_recording(const std::filesystem::path& path, const scenarios::scenario_spec& spec,
                     const real_outcome& outcome) {
  const std::string text =
      recording_json(spec, outcome).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  const std::filesystem::path temporary = path.string() + ".tmp";
  const auto fail = [&](const std::string& what, int error) {
    ::unlink(temporary.c_str());
    throw recording_error("--trace " + shown(path) + ": " + what + " (" + errno_text(error) + ")");
  };
  ::unlink(temporary.c_str());  // a stale one of an interrupted write
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create " + shown(temporary), errno);
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      fail("write failed", error);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    fail("sync failed", error);
  }
  if (::close(fd) != 0) fail("close failed", errno);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("rename failed", errno);
}

}  // namespace kvsim::real
