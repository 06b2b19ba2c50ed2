#include "real_backend/scripts/transfer_step_names.h"

#include <array>
#include <string>
#include <utility>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

constexpr std::array<std::pair<transfer_step, std::string_view>, 15> names{{
    {transfer_step::wire_quiet, "wire_quiet"},
    {transfer_step::ended, "ended"},
    {transfer_step::aborting, "aborting"},
    {transfer_step::prealloc_and_publish, "prealloc_and_publish"},
    {transfer_step::abort, "abort"},
    {transfer_step::all_ended, "all_ended"},
    {transfer_step::counted_text, "counted_text"},
    {transfer_step::open_request, "open_request"},
    {transfer_step::send_when_published, "send_when_published"},
    {transfer_step::check_at_gate, "check_at_gate"},
    {transfer_step::hold, "hold"},
    {transfer_step::saw_abort, "saw_abort"},
    {transfer_step::open_held_gates, "open_held_gates"},
    {transfer_step::over, "over"},
    {transfer_step::all_over, "all_over"},
}};

}  // namespace

std::string_view to_string(transfer_step step) {
  for (const auto& [s, name] : names) {
    if (s == step) return name;
  }
  return "?";
}

std::optional<transfer_step> transfer_step_named(std::string_view name) {
  for (const auto& [s, n] : names) {
    if (n == name) return s;
  }
  return std::nullopt;
}

void check_step_index(const scenarios::scenario_spec& spec, transfer_step step, std::size_t r) {
  const auto refuse = [&](const std::string& why) {
    throw real_backend_error("step '" + std::string(to_string(step)) + "' was given index " +
                             std::to_string(r) + ", " + why);
  };
  switch (step) {
    case transfer_step::ended:
    case transfer_step::aborting:
    case transfer_step::prealloc_and_publish:
    case transfer_step::abort:
    case transfer_step::counted_text:
    case transfer_step::open_request:
    case transfer_step::send_when_published:
    case transfer_step::hold:
    case transfer_step::saw_abort:
    case transfer_step::over:
      if (r >= spec.requests.size()) {
        refuse("but the scenario has " + std::to_string(spec.requests.size()) + " request(s)");
      }
      return;
    case transfer_step::check_at_gate:
      if (r >= spec.faults.gates.size()) {
        refuse("but the scenario has " + std::to_string(spec.faults.gates.size()) + " gate(s)");
      }
      return;
    default:
      if (r != 0) refuse("but it takes none (0)");  // the script sends 0
      return;
  }
}

}  // namespace kvsim::real
