#pragma once
// A secret handed to this process in its environment (the run's key, run_secret.h), taken
// out of it: the variable unset, so that no child started later inherits it, and its
// characters overwritten where the kernel keeps the environment the process was started with,
// so that /proc/PID/environ (readable by the user's other processes) no longer shows it.
// unsetenv alone does neither: it only drops the pointer from `environ`.
//
// To be called before any other thread exists (the environment is not thread-safe) and
// before any child is started.
#include <optional>
#include <string>

namespace kvsim::real {

// The variable's value (the first, should it be set twice), or empty when it is not set.
// The caller wipes the copy once used.
std::optional<std::string> take_environment_secret(const char* name);

}  // namespace kvsim::real
