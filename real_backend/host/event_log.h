#pragma once
// The core's event sink on real hardware: every rank's components emit here, from whichever
// host thread runs that rank, so emit() serialises them. Observers see each event once, in
// the order of the log, inside emit(): they must be quick and must not emit.
#include <functional>
#include <mutex>
#include <vector>

#include "core/ports.h"

namespace kvsim::real {

class event_log final : public core::event_sink {
 public:
  using observer = std::function<void(const core::event&)>;

  void emit(const core::event& e) override;
  void observe(observer o);  // before the run starts
  std::vector<core::event> events() const;

 private:
  mutable std::mutex mutex_;
  std::vector<core::event> events_;
  std::vector<observer> observers_;
};

}  // namespace kvsim::real
