// kvsim_soak: a soak benchmark of the core. Millions of requests through one
// prefill core and one decode core (tools/bench/soak_driver.h says what is driven, the mix of
// endings, and what one "operation" is); at each checkpoint it prints the requests served,
// operations per second over the last window and cumulatively, current RSS
// (/proc/self/statm), peak RSS (getrusage ru_maxrss) and the sizes of the core's books, then a
// verdict: RSS growth from the first to the last checkpoint and the ops/s ratio of the last
// window to the first. The claim under test: memory stays flat (within 10%) and ops/s does not
// fall as requests served grow. The verdict is printed, never turned into the exit status
// (timings on a shared machine are not a test); --check-bounded checks the books only.
//
//   kvsim_soak [--requests N] [--checkpoints A,B,...] [--seed S] [--window K] [--rooms R]
//              [--check-bounded]
//
// Exit: 0 done; 1 --check-bounded found a book above its bound; 2 a usage error (one line on
// stderr); 3 the bench is invalid (a page not back in its ledger at the end, a hung request).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/bench/soak_driver.h"

namespace {

using namespace kvsim::tools::soak;

constexpr const char* usage =
    "usage: kvsim_soak [--requests N] [--checkpoints A,B,...] [--seed S] [--window K] "
    "[--rooms R] [--check-bounded]\n"
    "  --requests N      requests to serve (default 10000000)\n"
    "  --checkpoints L   served counts to report at, increasing, each <= N (default\n"
    "                    1000000,5000000,10000000 of those <= N); N is always the last row\n"
    "  --seed S          the driver's seed (default 1)\n"
    "  --window K        requests live at once (default 64)\n"
    "  --rooms R         room ids in the reuse pool, >= K (default 4096)\n"
    "  --check-bounded   exit 1 if a core book at the last checkpoint exceeds\n"
    "                    4 * K + the tombstone tables' capacity\n";

struct usage_error {
  std::string message;
};

std::uint64_t parse_number(std::string_view flag, std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
    throw usage_error{std::string(flag) + " wants a non-negative integer, got '" +
                      std::string(text) + "'"};
  }
  return value;
}

struct options {
  soak_config config;
  std::vector<std::uint64_t> checkpoints;
  bool check_bounded = false;
  bool help = false;
};

options parse(int argc, char** argv) {
  options o;
  std::optional<std::string> checkpoints_text;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      return o;
    }
    if (arg == "--check-bounded") {
      o.check_bounded = true;
      continue;
    }
    if (arg != "--requests" && arg != "--checkpoints" && arg != "--seed" && arg != "--window" &&
        arg != "--rooms") {
      throw usage_error{"unknown argument '" + std::string(arg) + "' (see --help)"};
    }
    if (i + 1 >= argc) throw usage_error{std::string(arg) + " needs a value"};
    const std::string_view value = argv[++i];
    if (arg == "--requests") {
      o.config.requests = parse_number(arg, value);
      if (o.config.requests == 0) throw usage_error{"--requests must be at least 1"};
    } else if (arg == "--checkpoints") {
      checkpoints_text = std::string(value);
    } else if (arg == "--seed") {
      o.config.seed = parse_number(arg, value);
    } else if (arg == "--window") {
      const std::uint64_t k = parse_number(arg, value);
      if (k == 0 || k > 65536) throw usage_error{"--window must be in 1..65536"};
      o.config.window = static_cast<std::uint32_t>(k);
    } else if (arg == "--rooms") {
      const std::uint64_t r = parse_number(arg, value);
      if (r == 0 || r > 1'000'000) throw usage_error{"--rooms must be in 1..1000000"};
      o.config.room_ids = static_cast<std::uint32_t>(r);
    }
  }
  if (o.config.room_ids < o.config.window) {
    throw usage_error{"--rooms (" + std::to_string(o.config.room_ids) +
                      ") must be at least --window (" + std::to_string(o.config.window) + ")"};
  }
  // The pool must hold a full window of the largest requests.
  o.config.pages_per_rank = std::max<std::uint32_t>(
      o.config.pages_per_rank, 4 * o.config.window * o.config.max_pages_per_request);
  const std::uint64_t n = o.config.requests;
  if (checkpoints_text) {
    std::string_view rest = *checkpoints_text;
    if (rest.empty()) throw usage_error{"--checkpoints needs a comma-separated list"};
    while (true) {
      const std::size_t comma = rest.find(',');
      const std::uint64_t cp = parse_number("--checkpoints", rest.substr(0, comma));
      if (cp == 0) throw usage_error{"--checkpoints: a checkpoint must be at least 1"};
      if (cp > n) {
        throw usage_error{"--checkpoints: " + std::to_string(cp) + " is beyond --requests " +
                          std::to_string(n)};
      }
      if (!o.checkpoints.empty() && cp <= o.checkpoints.back()) {
        throw usage_error{"--checkpoints must be strictly increasing"};
      }
      o.checkpoints.push_back(cp);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  } else {
    for (std::uint64_t cp : {1'000'000ULL, 5'000'000ULL, 10'000'000ULL}) {
      if (cp <= n) o.checkpoints.push_back(cp);
    }
  }
  if (o.checkpoints.empty() || o.checkpoints.back() != n) o.checkpoints.push_back(n);
  return o;
}

double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (!(statm >> size >> resident)) return -1;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

double peak_rss_mib() {
  rusage usage_now{};
  if (getrusage(RUSAGE_SELF, &usage_now) != 0) return -1;
  return static_cast<double>(usage_now.ru_maxrss) / 1024.0;  // KiB on Linux
}

struct row {
  std::uint64_t served = 0;
  double window_ops_per_s = 0;
  double cumulative_ops_per_s = 0;
  double window_requests_per_s = 0;
  double seconds = 0;
  double rss = 0;
  double peak_rss = 0;
  std::vector<book> books;
};

void print_header(const std::vector<book>& books) {
  std::printf("%11s %13s %13s %11s %9s %9s %9s", "requests", "window ops/s", "cum ops/s",
              "window rq/s", "secs", "rss MiB", "peak MiB");
  for (const book& b : books)
    std::printf(" %*s", static_cast<int>(std::max<std::size_t>(b.name.size(), 8)), b.name.c_str());
  std::printf("\n");
}

void print_row(const row& r) {
  std::printf("%11llu %13.0f %13.0f %11.0f %9.1f %9.1f %9.1f",
              static_cast<unsigned long long>(r.served), r.window_ops_per_s, r.cumulative_ops_per_s,
              r.window_requests_per_s, r.seconds, r.rss, r.peak_rss);
  for (const book& b : r.books) {
    std::printf(" %*llu", static_cast<int>(std::max<std::size_t>(b.name.size(), 8)),
                static_cast<unsigned long long>(b.size));
  }
  std::printf("\n");
  std::fflush(stdout);
}

void print_summary(const soak_summary& s, std::uint64_t requests) {
  std::printf("\nrequests by kind (configured mix -> admitted):\n");
  for (std::size_t k = 0; k < request_kind_count; ++k) {
    std::printf("  %-21s %5.2f%% -> %llu (%.2f%%)\n", to_string(static_cast<request_kind>(k)),
                kind_mix_bp[k] / 100.0, static_cast<unsigned long long>(s.admitted_by_kind[k]),
                100.0 * static_cast<double>(s.admitted_by_kind[k]) / static_cast<double>(requests));
  }
  std::printf(
      "paths seen (events): decode releases completed %llu, after all ACKs %llu, other %llu; "
      "deadline quarantines %llu; quarantines confirmed %llu; transfers unconfirmed %llu; "
      "late opens refused %llu (admitted anyway %llu); tombstones evicted %llu; lifetime "
      "refusals %llu; tokens rejected %llu; ledger misuse %llu; allocations refused %llu; "
      "chunks refused %llu; polls of ended transfers %llu; %llu events, %llu ticks\n",
      static_cast<unsigned long long>(s.releases_completed),
      static_cast<unsigned long long>(s.releases_after_acks),
      static_cast<unsigned long long>(s.releases_other),
      static_cast<unsigned long long>(s.deadline_quarantines),
      static_cast<unsigned long long>(s.quarantines_confirmed),
      static_cast<unsigned long long>(s.transfers_unconfirmed),
      static_cast<unsigned long long>(s.late_opens_refused),
      static_cast<unsigned long long>(s.late_opens_admitted),
      static_cast<unsigned long long>(s.tombstones_evicted),
      static_cast<unsigned long long>(s.lifetime_refusals),
      static_cast<unsigned long long>(s.tokens_rejected),
      static_cast<unsigned long long>(s.ledger_misuse),
      static_cast<unsigned long long>(s.allocations_refused),
      static_cast<unsigned long long>(s.chunks_refused),
      static_cast<unsigned long long>(s.unknown_handle_polls),
      static_cast<unsigned long long>(s.events), static_cast<unsigned long long>(s.ticks));
}

void print_preamble(const soak_config& c) {
  std::printf(
      "kvsim_soak: %llu requests, seed %llu, window %u, %u room ids, %u pages per rank, "
      "1-%u pages per request, %u tombstones per table\n",
      static_cast<unsigned long long>(c.requests), static_cast<unsigned long long>(c.seed),
      c.window, c.room_ids, c.pages_per_rank, c.max_pages_per_request, c.tombstones_max);
  std::printf("mix:");
  for (std::size_t k = 0; k < request_kind_count; ++k) {
    std::printf(" %s %.2f%%", to_string(static_cast<request_kind>(k)), kind_mix_bp[k] / 100.0);
  }
  std::printf("\noperation = one driver call into a core object (tools/bench/soak_driver.h)\n\n");
  std::fflush(stdout);
}

// Drives the soak to each checkpoint and prints its row: rates over the window since the last
// checkpoint and since the start, memory, and the size of every book.
std::vector<row> run_checkpoints(soak_driver& driver, const std::vector<std::uint64_t>& checkpoints) {
  std::vector<row> rows;
  using steady = std::chrono::steady_clock;
  const steady::time_point start = steady::now();
  steady::time_point window_start = start;
  std::uint64_t window_ops = 0;
  std::uint64_t window_served = 0;
  for (std::uint64_t cp : checkpoints) {
    driver.run_until(cp);
    const steady::time_point now = steady::now();
    const double window_s = std::chrono::duration<double>(now - window_start).count();
    const double total_s = std::chrono::duration<double>(now - start).count();
    row r;
    r.served = driver.served();
    r.window_ops_per_s = static_cast<double>(driver.operations() - window_ops) / window_s;
    r.cumulative_ops_per_s = static_cast<double>(driver.operations()) / total_s;
    r.window_requests_per_s = static_cast<double>(r.served - window_served) / window_s;
    r.seconds = total_s;
    r.rss = rss_mib();
    r.peak_rss = peak_rss_mib();
    r.books = driver.books();
    if (rows.empty()) print_header(r.books);
    print_row(r);
    rows.push_back(r);
    window_start = steady::now();  // the probes above are not part of the next window
    window_ops = driver.operations();
    window_served = driver.served();
  }
  return rows;
}

// Memory and throughput from the first checkpoint to the last.
void print_verdict(const std::vector<row>& rows) {
  const row& first = rows.front();
  const row& last = rows.back();
  if (rows.size() < 2) {
    std::printf("verdict: one checkpoint only, nothing to compare (give --checkpoints A,B)\n");
    return;
  }
  const double rss_growth = 100.0 * (last.rss - first.rss) / first.rss;
  const double peak_growth = 100.0 * (last.peak_rss - first.peak_rss) / first.peak_rss;
  const double ops_ratio = last.window_ops_per_s / first.window_ops_per_s;
  std::printf(
      "verdict: RSS %+.1f%% from %llu to %llu requests (%.1f -> %.1f MiB; peak %+.1f%%): %s; "
      "ops/s last/first window %.2f (%.0f -> %.0f): %s\n",
      rss_growth, static_cast<unsigned long long>(first.served),
      static_cast<unsigned long long>(last.served), first.rss, last.rss, peak_growth,
      rss_growth <= 10.0 ? "flat (within 10%)" : "GROWS (over 10%)", ops_ratio,
      first.window_ops_per_s, last.window_ops_per_s,
      ops_ratio >= 0.9 ? "no fall (within 10%)" : "FALLS (over 10%)");
}

// Every book at the last checkpoint within the bound: 0 when so, 1 (with the books over it)
// when not.
int check_bounded(const soak_driver& driver, const soak_config& c, const row& last) {
  const std::uint64_t bound = driver.book_bound();
  std::string over;
  for (const book& b : last.books) {
    if (b.size > bound) over += (over.empty() ? "" : ", ") + b.name + "=" + std::to_string(b.size);
  }
  if (!over.empty()) {
    std::printf(
        "bounded: FAIL at %llu requests: %s above the bound %llu (4 * window %u + "
        "tombstone capacity %llu)\n",
        static_cast<unsigned long long>(last.served), over.c_str(),
        static_cast<unsigned long long>(bound), c.window,
        static_cast<unsigned long long>(bound - 4ULL * c.window));
    return 1;
  }
  std::printf("bounded: ok at %llu requests: every book <= %llu\n",
              static_cast<unsigned long long>(last.served), static_cast<unsigned long long>(bound));
  return 0;
}

int run(const options& o) {
  const soak_config& c = o.config;
  print_preamble(c);
  soak_driver driver(c);
  std::vector<row> rows;
  try {
    rows = run_checkpoints(driver, o.checkpoints);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvsim_soak: the bench is invalid: %s\n", e.what());
    return 3;
  }
  const std::vector<std::string> problems = driver.final_audit();
  print_summary(driver.summary(), c.requests);
  std::printf("operations: %llu (%.1f per request)\n",
              static_cast<unsigned long long>(driver.operations()),
              static_cast<double>(driver.operations()) / static_cast<double>(c.requests));
  print_verdict(rows);
  if (!problems.empty()) {
    for (const std::string& p : problems) std::fprintf(stderr, "kvsim_soak: audit: %s\n", p.c_str());
    std::fprintf(stderr, "kvsim_soak: the bench is invalid: %zu audit problem(s)\n", problems.size());
    return 3;
  }
  std::printf("audit: both ledgers have every page free and are consistent\n");
  return o.check_bounded ? check_bounded(driver, c, rows.back()) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "kvsim_soak: %s\n", e.message.c_str());
    return 2;
  }
  if (o.help) {
    std::fputs(usage, stdout);
    return 0;
  }
  return run(o);
}
