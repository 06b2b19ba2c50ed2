#include "spec/pin_parser.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "spec/scenario_caps.h"
#include "spec/scenario_names.h"
#include "spec/request_pin.h"

namespace kvsim::scenarios::detail {
namespace {

std::string request_path(std::size_t index) { return element_path("requests", index); }

std::vector<core::page_index> decode_pages(const json_reader& in, const json& value,
                                           const std::string& path, const request_spec& request,
                                           const topology_spec& topology) {
  in.array(value, path);
  std::vector<core::page_index> pages;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string page_path = element_path(path, i);
    const std::uint32_t page = in.u32(value[i], page_path, 0);
    if (page >= topology.smallest_pool()) {
      in.fail_field(catalogue_problem::out_of_range, page_path,
                    (topology.pages_by_rank.empty()
                         ? "must be a page of the pool, below topology.pages_per_rank = "
                         : "must be a page of every pool, below the smallest of topology.pages_by_rank, ") +
                        std::to_string(topology.smallest_pool()) + " (got " +
                        std::to_string(page) + ")");
    }
    if (std::find(pages.begin(), pages.end(), page) != pages.end()) {
      in.fail_field(catalogue_problem::inconsistent, path,
                    "names page " + std::to_string(page) + " twice");
    }
    pages.push_back(page);
  }
  // An empty list is a length mismatch too: every request has at least one page.
  if (pages.size() != request.pages) {
    in.fail_field(catalogue_problem::inconsistent, path,
                  "lists " + std::to_string(pages.size()) +
                      " page(s), but the request has pages = " + std::to_string(request.pages) +
                      ": decode allocates exactly the pages pinned");
  }
  return pages;
}

// A pinned abort is decode's, at its time: the phase that would place it must be `anytime`.
void check_pinned_abort(const json_reader& in, const std::string& path,
                        const request_spec& request) {
  if (!request.abort) {
    in.fail_field(catalogue_problem::inconsistent, path,
                  "is given but the request has no 'abort' (a pinned abort needs "
                  "\"abort\": \"anytime\")");
  }
  if (*request.abort != abort_phase::anytime) {
    in.fail_field(catalogue_problem::inconsistent, path,
                  std::string("places the abort itself, so the request's 'abort' must be "
                              "'anytime' (got '") +
                      to_string(*request.abort) + "')");
  }
  if (request.origin != abort_origin::decode) {
    in.fail_field(catalogue_problem::inconsistent, path,
                  "is a time at which decode sends the abort, but origin 'prefill' means prefill "
                  "fails the request");
  }
}

}  // namespace

request_pin parse_pin(const json_reader& in, const json& value, const std::string& path,
                      const request_spec& request, const topology_spec& topology) {
  in.object(value, path);
  in.only_keys(value, path, {"decode_pages", "submit_at_us", "abort_at_us"});
  request_pin pin;
  if (const json* pages = json_reader::optional(value, "decode_pages")) {
    pin.decode_pages = decode_pages(in, *pages, member_path(path, "decode_pages"), request, topology);
  }
  const auto pinned_time = [&](const char* key) -> std::optional<std::uint64_t> {
    const json* given = json_reader::optional(value, key);
    if (given == nullptr) return std::nullopt;
    return in.integer(*given, member_path(path, key), 0, caps::pinned_time_max_us);
  };
  pin.submit_at_us = pinned_time("submit_at_us");
  pin.abort_at_us = pinned_time("abort_at_us");
  if (!pin.pins_anything()) {
    in.fail_field(catalogue_problem::inconsistent, path,
                  "pins nothing: give decode_pages, submit_at_us or abort_at_us");
  }
  if (pin.abort_at_us) {
    const std::string abort_path = member_path(path, "abort_at_us");
    check_pinned_abort(in, abort_path, request);
    if (pin.submit_at_us && *pin.abort_at_us < *pin.submit_at_us) {
      in.fail_field(catalogue_problem::inconsistent, abort_path,
                    "is before " + member_path(path, "submit_at_us") + " = " +
                        std::to_string(*pin.submit_at_us) + " (got " +
                        std::to_string(*pin.abort_at_us) + ")");
    }
  }
  return pin;
}

void check_pins(const json_reader& in, const scenario_spec& spec) {
  std::optional<std::size_t> last_submitted;  // the latest earlier request with a pinned submit
  for (std::size_t i = 0; i < spec.requests.size(); ++i) {
    const std::optional<request_pin>& pin = spec.requests[i].pin;
    if (!pin) continue;
    const std::string path = member_path(request_path(i), "pin");
    if (spec.kind != scenario_kind::transfer) {
      in.fail_field(catalogue_problem::inconsistent, path,
                    "belongs to transfer scenarios only (kind is '" +
                        std::string(to_string(spec.kind)) + "')");
    }
    // A time the run cannot reach within its steps is a time the world cannot honour.
    const std::uint64_t reachable_us = spec.step_limit * transfer_poll_interval_us;
    for (const auto& [key, time] : {std::pair{"submit_at_us", pin->submit_at_us},
                                    std::pair{"abort_at_us", pin->abort_at_us}}) {
      if (!time || *time < reachable_us) continue;
      in.fail_field(catalogue_problem::inconsistent, member_path(path, key),
                    "is " + std::to_string(*time) + " us, past what a run of step_limit = " +
                        std::to_string(spec.step_limit) + " steps reaches: prefill's bootstrap "
                        "polls every " + std::to_string(transfer_poll_interval_us) +
                        " us, a step each, so about " + std::to_string(reachable_us) +
                        " us; raise step_limit (at most " + std::to_string(caps::step_limit_max) +
                        ") or shorten the log's idle gaps");
    }
    // The world holds the request until its abort: past the I9 bound it would be overdue.
    const std::uint64_t submitted = pin->submit_at_us.value_or(0);
    if (pin->abort_at_us && *pin->abort_at_us - submitted >= spec.heal_bound_us) {
      in.fail_field(catalogue_problem::inconsistent, member_path(path, "abort_at_us"),
                    "comes " + std::to_string(*pin->abort_at_us - submitted) +
                        " us after the request's submission, not within heal_bound_us = " +
                        std::to_string(spec.heal_bound_us) +
                        ": the request would be held past its I9 bound");
    }
    if (!pin->submit_at_us) continue;
    // Prefill and decode start the requests in index order: a later request cannot be
    // submitted before an earlier one.
    if (last_submitted) {
      const std::uint64_t before = *spec.requests[*last_submitted].pin->submit_at_us;
      if (*pin->submit_at_us < before) {
        in.fail_field(catalogue_problem::inconsistent, member_path(path, "submit_at_us"),
                      "is before " + member_path(request_path(*last_submitted), "pin.submit_at_us") +
                          " = " + std::to_string(before) + " (got " +
                          std::to_string(*pin->submit_at_us) +
                          "): the world starts requests in index order, so list them in the "
                          "log's order");
      }
    }
    last_submitted = i;
  }
}

}  // namespace kvsim::scenarios::detail
