#pragma once
// What the threads of one transfer script share (real_backend/scripts/transfer_script.h): the
// scenario, read only, and the pieces every thread may use at once: the findings, the event
// log and its observers, the tally of control messages in flight, the gates, and the pages
// (prefill's written by the prefill thread only; decode's checked by both rank threads,
// serialised). No core object lives here: each rank's are built, bound and called by that
// rank's thread (transfer_prefill.h, transfer_decode.h).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/variant.h"
#include "real_backend/scripts/copy_watch.h"
#include "real_backend/data_plane.h"
#include "real_backend/host/event_log.h"
#include "real_backend/event_recorder.h"
#include "real_backend/scripts/page_owner_view.h"
#include "real_backend/scripts/real_outcome.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/scripts/script_board.h"
#include "real_backend/scripts/shared_pages.h"
#include "real_backend/scripts/transfer_watch.h"
#include "real_backend/scripts/wire_tally.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

inline constexpr core::rank_id prefill_rank = 0;
inline constexpr core::rank_id decode_rank = 1;

// In a run of separate processes (rank_process.h) each process builds the whole context on
// the same shared data plane: the pages, gates and the board (script_board.h: the wire tally,
// the findings' order, decode's page owners) are then the same memory in both, and each
// process's rank thread adds the findings it sees.
struct transfer_context {
  // `secret`: the run's key; drawn afresh when not given (both ranks in this process).
  transfer_context(const scenarios::scenario_spec& scenario, core::variant v, data_plane& plane,
                   const std::optional<run_secret>& secret = std::nullopt);

  const scenarios::scenario_spec& spec;
  core::variant variant;
  // The run's key: the control link proves it and the abort tokens are keyed by it, each
  // with a key derived for it.
  const run_secret secret;
  script_board board;  // shared memory of the plane, or empty (then each piece keeps its own)
  std::string plane_text;            // where bytes are read back from, for the findings
  std::vector<core::room_key> keys;  // request r's (room, generation)
  std::vector<std::unique_ptr<hold_gate>> gates;  // per spec.faults.gates; first: freed last
  finding_log findings;
  event_log log;
  event_recorder recording;  // the log as kvsim real --trace writes it
  copy_watch copies;              // prefill's copies as its engine saw them (I2)
  transfer_watch watch;           // I2 as the copies say, I3 from decode's events
  page_owner_view decode_owners;  // decode's ledger as its events tell it (landing checks)
  wire_tally wire;
  std::unique_ptr<page_memory> prefill_pages;
  std::unique_ptr<page_memory> decode_memory;  // what the transfer engine copies into
  shared_pages decode_pages;                   // the same pages, for the checks
};

}  // namespace kvsim::real
