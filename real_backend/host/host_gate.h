#pragma once
// The host data plane's gate: two 32-bit words in shared memory (host_plane_fd's region), so
// that the process whose copy worker waits at it and the process that opens it need not be
// the same. The worker that reaches it sets `arrived` and sleeps on `open` with a futex (a
// real wait: no polling loop holds a core), re-checking at least every 10 ms so that a lost
// wake-up costs time, never the run. open() stores 1 and wakes every waiter.
#include <cstdint>
#include <span>

#include "real_backend/data_plane.h"

namespace kvsim::real {

class host_gate final : public hold_gate {
 public:
  // `words`: 8 bytes of shared memory, zero until the gate is reached or opened.
  explicit host_gate(std::span<std::byte> words);
  ~host_gate() override;  // opens it: a gate left closed would hold its worker forever

  bool reached() const override;
  void open() override;
  bool is_open() const override;

  // Run by the copy worker that the gate holds: says it arrived, then waits until opened.
  void arrive_and_wait();

 private:
  std::uint32_t* arrived_;
  std::uint32_t* open_;
};

}  // namespace kvsim::real
