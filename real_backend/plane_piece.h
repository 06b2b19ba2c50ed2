#pragma once
// A piece (pages, host pages) handed back to a data plane, as the type that plane made it:
// data_plane's interfaces take the base types, and a piece of another plane is a
// real_backend_error naming both, never a bad cast.
#include <string>

#include "real_backend/errors.h"

namespace kvsim::real {

// `plane`: "the CUDA data plane"; `what`: "pages".
template <class Made, class Given>
Made& piece_made_by(Given& given, const char* plane, const char* what) {
  auto* made = dynamic_cast<Made*>(&given);
  if (made == nullptr) {
    throw real_backend_error(std::string(plane) + " was given " + what + " it did not make");
  }
  return *made;
}

}  // namespace kvsim::real
