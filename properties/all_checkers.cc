#include "properties/all_checkers.h"

namespace kvsim::properties {

void checker_set::attach(sim::world& w) {
  w.add_checker(use_after_free);
  w.add_checker(ack_after_drain);
  w.add_checker(release_after_acks);
  w.add_checker(closed_room);
  w.add_checker(host_pages);
  w.add_checker(data_integrity);
  // I9 before I8: a request that never finished is the cause, the pages it still holds (which
  // the leak checker would report at the same quiescence) are the consequence.
  w.add_checker(liveness);
  w.add_checker(leak);
}

}  // namespace kvsim::properties
