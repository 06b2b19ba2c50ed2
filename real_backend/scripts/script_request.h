#pragma once
// One request of the script to a rank that serves its steps (step_channel.h's protocol),
// parsed strictly, by what the rank serves: a transfer script's rank its steps, a HiCache
// rank process (prefetch_processes.h) its part of the run as a whole. a line is taken only when it is exactly one of the requests, one space
// between words, the id a decimal number, the step a known name and its index a decimal
// number that fits 32 bits. The link that carried the line authenticated who sent it
// (step_link.h); this checks what it says. Whether the index names a request or gate of the
// scenario is transfer_step_names.h's check_step_index, before the step runs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "real_backend/scripts/transfer_step_names.h"

namespace kvsim::real {

enum class served_script : std::uint8_t {
  transfer,  // ask ID STEP R, watch ID STEP R, cancel ID, findings ID, events ID, stop ID
  prefetch   // connect ID, run ID, findings ID, events ID, stop ID
};

struct script_request {
  std::string verb;
  std::uint64_t id = 0;
  transfer_step step = transfer_step::wire_quiet;  // ask and watch
  std::size_t r = 0;                               // ask and watch
};

// Throws real_backend_error "the script sent '<the line, at most 80 characters, a control
// character shown as \xNN>'".
script_request parse_script_request(const std::string& line,
                                    served_script served = served_script::transfer);

}  // namespace kvsim::real
