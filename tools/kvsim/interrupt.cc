#include "tools/kvsim/interrupt.h"

#include <csignal>

namespace kvsim::tools {
namespace {

// Written only by the handler, read by the search loops: the one global the CLI needs, since
// a signal handler can reach nothing else.
volatile std::sig_atomic_t caught_signal = 0;

extern "C" void on_interrupt(int signal) {
  if (caught_signal == 0) caught_signal = signal;
}

}  // namespace

interrupt_scope::interrupt_scope() {
  caught_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a blocking poll() or read() returns EINTR, so the loop sees the flag now.
  action.sa_flags = 0;
  sigaction(SIGINT, &action, &previous_interrupt_);
  sigaction(SIGTERM, &action, &previous_terminate_);
}

interrupt_scope::~interrupt_scope() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
}

int interrupt_signal() { return static_cast<int>(caught_signal); }

int interrupted_exit_code(int signal) { return 128 + signal; }

}  // namespace kvsim::tools
