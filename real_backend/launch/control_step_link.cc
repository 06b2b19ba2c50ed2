#include "real_backend/launch/control_step_link.h"

#include "real_backend/wire/control_frame.h"
#include "real_backend/errors.h"

namespace kvsim::real {

bool control_step_link::write_line(const std::string& line) {
  if (line.size() > step_line_max) {
    throw real_backend_error("a step line of " + std::to_string(line.size()) +
                             " bytes is over the step frame's limit of " +
                             std::to_string(step_line_max));
  }
  std::string out = line.empty() ? " " : line;
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = ' ';
  }
  try {
    wire_.send_step(peer_, out);
    return true;
  } catch (const control_plane_error&) {
    return false;  // the link has gone: the reader finds why
  }
}

std::optional<std::string> control_step_link::read_line(std::chrono::milliseconds timeout) {
  return wire_.receive_step_for(timeout);
}

}  // namespace kvsim::real
