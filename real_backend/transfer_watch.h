#pragma once
// Findings of a transfer script from the core's events alone, the rules of the simulator's
// checkers:
//   I2: prefill sends a drain-ACK while the room is open or a transfer of it is in flight;
//   I3: decode frees a page of a request whose abort it armed before every expected rank's
//       drain-ACK was counted.
// Fed inside event_log::emit (serialised), from whichever rank's thread emitted; read by the
// script's thread.
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "core/events.h"
#include "real_backend/real_outcome.h"

namespace kvsim::real {

class transfer_watch {
 public:
  transfer_watch(finding_log& findings, core::rank_id decode_rank)
      : findings_(findings), decode_rank_(decode_rank) {}

  void observe(const core::event& e);
  // "1 of 2": drain-ACKs counted for an armed abort.
  std::string counted_text(core::room_key key) const;

 private:
  struct armed_abort {
    std::set<core::rank_id> expected;
    std::set<core::rank_id> counted;
  };
  finding_log& findings_;
  core::rank_id decode_rank_;
  mutable std::mutex mutex_;
  std::map<core::room_key, armed_abort> armed_;
  std::set<core::room_key> reported_;
};

}  // namespace kvsim::real
