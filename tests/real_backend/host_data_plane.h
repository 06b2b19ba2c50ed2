#pragma once
// The tests' host data plane is the product's (real_backend/host/host_data_plane.h, `kvsim real
// --data-plane host`): this name stays for the tests that use it.
#include "real_backend/host/host_data_plane.h"

namespace kvsim::testing {
using host_data_plane = real::host_data_plane;
}  // namespace kvsim::testing
