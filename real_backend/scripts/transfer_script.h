#pragma once
// A catalogue transfer scenario (page42, canary) on a real data plane: the production core
// (prefill_sender, decode_receiver, page ledgers, tokens) with the chosen variant, KV pages
// holding canary bytes, copies held by a gate, control messages over loopback TCP.
//
// Threads, as core/owner_thread.h wants them: prefill and decode each run on a host thread
// of their own (rank_thread.h), which builds its rank's core objects, binds the sender or
// receiver to itself, polls its own TCP endpoint and transfer engine, and alone calls them
// (transfer_prefill.h, transfer_decode.h). The script runs on the caller's thread and calls
// no core object: it hands each step to the rank that takes it and waits for that rank to say
// it is done (one handshake per step), so the order of the steps below is the scenario's, as
// it was when one thread stepped both ranks. Where the script decides on what decode has
// heard, it first waits until every control message sent has been handled (wire_tally.h).
//
//   for each request: decode pre-allocates and publishes its pages; prefill fills its source
//   pages with the request's canary, opens, and sends the chunk once the metadata is in.
//   A request aborted "during the transfer" is aborted by decode while its gate holds the
//   copy on the device (after the pages before the gate have landed); its transfer stays
//   held while the script goes on. A held transfer resumes at the latest moment the scenario
//   allows: when nothing else can move (a request waits for it to end and every message has
//   been heard), or once the next request's own data has landed, before decode hears that
//   the request is complete. That is the seed's order (a late write after the page was
//   reallocated and written); in the simulator prefill runs its requests one after another,
//   here its transfer workers run side by side, as Mooncake's do.
//
// Checks, as the run goes: from the core's events, I2 when prefill sends a drain-ACK for a
// room that is open or still has a transfer in flight, and I3 when decode frees a page of an
// aborted request before every drain-ACK counted; I1 when a transfer's page lands after its
// source page was freed or given away on prefill, or in a destination page that decode had
// given to another request or freed (ownership at landing, as decode's ledger events say;
// bytes read back from the device); I7 when decode reads a page and finds bytes that are not
// the request's own; I9 when a request does not finish on decode within `liveness` once
// nothing holds it (a lost drain-ACK): the run stops there, as a real deployment would hang.
#include <chrono>

#include "core/variant.h"
#include "real_backend/data_plane.h"
#include "real_backend/scripts/real_outcome.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

struct script_options {
  std::chrono::milliseconds patience{20'000};  // any scripted wait on the device or network
  // How long an aborted request may stay unfinished on decode once nothing holds its
  // transfer any more, before that is reported as I9 (liveness) and the run stops there.
  std::chrono::milliseconds liveness{2'000};
};

real_outcome run_transfer_script(const scenarios::scenario_spec& spec, core::variant v,
                                 const std::string& variant_name, data_plane& plane,
                                 const script_options& options = {});

class script_rank;
struct transfer_context;
// The script alone, on ranks that may live elsewhere (rank_process.h): its own findings (I9)
// go to context.findings.
void run_transfer_steps(transfer_context& context, script_rank& prefill, script_rank& decode,
                        const script_options& options);
// Every scenario gate held on prefill's engine, before anything is submitted.
void hold_gated_transfers(transfer_context& context, gated_transfer_engine& engine);

}  // namespace kvsim::real
