#pragma once
// Findings of a transfer script from what the ranks did, the rules of the simulator's
// checkers:
//   I2: prefill sends a drain-ACK while a copy of the request is still running, as its data
//       plane saw the copies (copy_watch.h), not as the core's event says of itself; a copy
//       submitted after the drain-ACK is I2 too (the room was still open: prefill_actor);
//   I3: decode frees a page of a request whose abort it armed before every expected rank's
//       drain-ACK was counted.
// Fed inside event_log::emit (serialised), from whichever rank's thread emitted; read by the
// script's thread.
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "core/events.h"
#include "real_backend/scripts/copy_watch.h"
#include "real_backend/scripts/real_outcome.h"

namespace kvsim::real {

class transfer_watch {
 public:
  transfer_watch(finding_log& findings, copy_watch& copies, core::rank_id decode_rank)
      : findings_(findings), copies_(copies), decode_rank_(decode_rank) {}

  void observe(const core::event& e);
  // "1 of 2": drain-ACKs counted for an armed abort.
  std::string counted_text(core::room_key key) const;

 private:
  struct armed_abort {
    std::set<core::rank_id> expected;
    std::set<core::rank_id> counted;
  };
  finding_log& findings_;
  copy_watch& copies_;
  core::rank_id decode_rank_;
  mutable std::mutex mutex_;
  std::map<core::room_key, armed_abort> armed_;
  std::set<core::room_key> reported_;
};

}  // namespace kvsim::real
