#pragma once
// Ctrl-C and SIGTERM during a search: the search stops after the run in progress and the
// command still writes its table, JSON and JUnit for what ran, marked interrupted, then exits
// as shells expect of a signalled command (128 + the signal: 130 SIGINT, 143 SIGTERM).
// Forked search workers inherit the handler, so a signal sent to the whole process group
// (the terminal's Ctrl-C) stops each of them the same way.
#include <signal.h>

namespace kvsim::tools {

// While alive, SIGINT and SIGTERM set the interrupt flag instead of ending the process; the
// previous handlers come back on destruction. A second signal while a first is being handled
// changes nothing (the search is already stopping).
class interrupt_scope {
 public:
  interrupt_scope();
  ~interrupt_scope();
  interrupt_scope(const interrupt_scope&) = delete;
  interrupt_scope& operator=(const interrupt_scope&) = delete;

 private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

// The signal that interrupted the search (SIGINT or SIGTERM), 0 while none has.
int interrupt_signal();
// The exit code a shell expects after `signal`: 128 + signal.
int interrupted_exit_code(int signal);

}  // namespace kvsim::tools
