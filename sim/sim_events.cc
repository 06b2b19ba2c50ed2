#include "sim/sim_events.h"

#include <locale>
#include <sstream>

#include "sim/event_phrase.h"
#include "spec/one_line.h"
#include "spec/trace_format.h"

namespace kvsim::sim {
namespace {

using core::pages_text;

// The core has no names for these port enums (it never prints them); the trace does.
const char* poll_text(core::transfer_poll poll) {
  switch (poll) {
    case core::transfer_poll::in_flight:
      return "in_flight";
    case core::transfer_poll::succeeded:
      return "succeeded";
    case core::transfer_poll::failed:
      return "failed";
    case core::transfer_poll::timed_out_unconfirmed:
      return "timed_out_unconfirmed";
  }
  return "unknown_poll";
}

const char* control_text(core::control_kind kind) {
  switch (kind) {
    case core::control_kind::metadata:
      return "metadata";
    case core::control_kind::abort:
      return "abort";
    case core::control_kind::abort_ack:
      return "abort_ack";
    case core::control_kind::status:
      return "status";
    case core::control_kind::chunk_ready:
      return "chunk_ready";
  }
  return "unknown_control";
}

static_assert(std::variant_size_v<sim_event_body> == spec::event_kind_names.size(),
              "every event alternative has its kind's name in spec/trace_format.h, in order");

// The fields of an event after its kind's name (describe() writes the name from the table).
struct describer {
  std::ostringstream& out;

  void operator()(const core_decided& e) const { out << " " << core::describe(e.what); }
  void operator()(const actor_started& e) const {
    out << " name=" << spec::one_line(to_string(e.name));
  }
  void operator()(const actor_finished& e) const {
    out << " " << (e.cancelled ? "cancelled" : "returned");
  }
  void operator()(const collective_entered& e) const {
    out << " group=" << e.group << " seq=" << e.sequence << " rank=" << e.rank
        << " op=" << to_string(e.op) << " value=" << e.value;
  }
  void operator()(const collective_left& e) const {
    out << " group=" << e.group << " seq=" << e.sequence << " rank=" << e.rank
        << " result=" << e.result;
  }
  void operator()(const transfer_submitted& e) const {
    out << " transfer=" << e.transfer << " " << core::to_string(e.owner)
        << " rank " << e.source_rank << " " << pages_text(e.source_pages) << " -> rank "
        << e.destination_rank << " " << pages_text(e.destination_pages);
  }
  void operator()(const transfer_page_copied& e) const {
    out << " transfer=" << e.transfer << " " << core::to_string(e.owner)
        << " rank " << e.source_rank << " page " << e.source_page << " -> rank "
        << e.destination_rank << " page " << e.destination_page;
  }
  void operator()(const transfer_ended& e) const {
    out << " transfer=" << e.transfer << " " << core::to_string(e.owner)
        << " outcome=" << poll_text(e.outcome);
  }
  void operator()(const transfer_timed_out& e) const {
    out << " transfer=" << e.transfer << " " << core::to_string(e.owner) << " "
        << (e.still_running ? "still_running" : "stopped");
  }
  void operator()(const page_written& e) const {
    out << " rank=" << e.rank << " page=" << e.page
        << " writer=" << core::to_string(e.writer) << " logical=" << e.logical_page;
  }
  void operator()(const page_read& e) const {
    out << " rank=" << e.rank << " page=" << e.page
        << " reader=" << core::to_string(e.reader) << " logical=" << e.logical_page << " "
        << (e.intact ? "intact" : "corrupt");
    if (e.found) out << " found=" << core::to_string(*e.found);
  }
  void operator()(const storage_read_started& e) const {
    out << " read=" << e.read << " rank=" << e.rank << " "
        << core::to_string(e.owner) << " host " << pages_text(e.host_pages);
  }
  void operator()(const storage_page_written& e) const {
    out << " read=" << e.read << " rank=" << e.rank << " "
        << core::to_string(e.owner) << " host page " << e.page << " logical=" << e.logical_page;
  }
  void operator()(const storage_read_ended& e) const {
    out << " read=" << e.read << " rank=" << e.rank << " "
        << core::to_string(e.owner) << " " << (e.completed ? "completed" : "failed") << " after "
        << e.pages_written << " page(s)";
  }
  void operator()(const message_sent& e) const {
    out << " message=" << e.message << " from=" << e.from << " to=" << e.to
        << " kind=" << control_text(e.kind) << " " << core::to_string(e.key);
    if (e.injected) out << " injected";
  }
  void operator()(const message_delivered& e) const {
    out << " message=" << e.message << " to=" << e.to;
  }
  void operator()(const message_dropped& e) const {
    out << " message=" << e.message;
  }
  void operator()(const fault_fired& e) const { out << " " << spec::one_line(e.what); }
  void operator()(const failure_injected& e) const {
    out << " " << core::to_string(e.key) << " rank=" << e.rank;
  }
  void operator()(const ledger_audited& e) const {
    out << " rank=" << e.rank << " free=" << e.free_pages << "/" << e.pages_total
        << " owned=" << e.owned_pages << " retiring=" << e.retiring_pages
        << " leased=" << e.leased_pages << " quarantined=" << e.quarantined_pages
        << " leases=" << e.active_leases;
    for (const auto& p : e.owned) out << " page" << p.page << "=" << core::to_string(p.owner);
    for (const std::string& line : e.inconsistencies) out << " inconsistent: " << spec::one_line(line);
  }
  void operator()(const core_audited& e) const {
    out << " rank=" << e.rank << " " << spec::one_line(e.component) << " holds "
        << e.held.size();
    for (const std::string& line : e.held) out << "; " << spec::one_line(line);
  }
  void operator()(const status_read& e) const {
    out << " rank=" << e.rank << " " << core::to_string(e.key) << " "
        << (e.status ? core::to_string(*e.status) : "absent");
  }
  void operator()(const gate_changed& e) const {
    out << " gate=" << spec::one_line(e.gate) << " " << (e.open ? "open" : "closed");
  }
  void operator()(const rank_stopped& e) const { out << " rank=" << e.rank; }
  void operator()(const transport_torn_down& e) const {
    out << " rank=" << e.rank;
  }
  void operator()(const message_lost& e) const {
    out << " message=" << e.message << " to=" << e.to;
  }
  void operator()(const misuse_attempted& e) const {
    out << " rank=" << e.rank << " " << to_string(e.call);
    switch (e.call) {
      case ledger_call::allocate:
        out << " caller=" << core::to_string(e.caller) << " count=" << e.count;
        break;
      case ledger_call::lease:
        out << " caller=" << core::to_string(e.caller) << " " << core::to_string(e.role)
            << " pages=" << pages_text(e.pages);
        break;
      case ledger_call::release:
        out << " caller=" << core::to_string(e.caller) << " pages=" << pages_text(e.pages);
        break;
      case ledger_call::release_all:
        out << " caller=" << core::to_string(e.caller);
        break;
      case ledger_call::end_lease:
      case ledger_call::quarantine:
      case ledger_call::confirm_quarantine:
        out << " lease=" << e.lease;
        break;
    }
  }
  void operator()(const ledger_created& e) const {
    out << " rank=" << e.rank << " pages=" << e.pages_total << " order="
        << (e.order == core::allocation_order::lifo ? "lifo" : "fifo");
  }
  void operator()(const engine_freed& e) const {
    out << " rank=" << e.rank << " " << core::to_string(e.key);
  }
  void operator()(const ignored_call_attempted& e) const {
    out << " rank=" << e.rank << " " << to_string(e.call) << " "
        << core::to_string(e.key);
  }
  void operator()(const deadlines_checked& e) const { out << " rank=" << e.rank; }
  void operator()(const ignored_call_answered& e) const {
    out << " rank=" << e.rank << (e.accepted ? " accepted" : " ignored");
  }
  void operator()(const room_table_read& e) const {
    out << " rank=" << e.rank;
    for (const auto& r : e.rooms) {
      out << " " << core::to_string(r.key) << ":" << (r.tracked ? "t" : "-")
          << (r.admitting ? "a" : "-") << (r.closed ? "c" : "-") << (r.tombstoned ? "x" : "-")
          << r.pending_leases;
    }
  }
  void operator()(const status_written& e) const {
    out << " rank=" << e.rank << " " << core::to_string(e.key) << " "
        << core::to_string(e.status) << (e.applied ? " applied" : " ignored");
  }
  void operator()(const lifetimes_created& e) const {
    out << " rank=" << e.rank << " tombstones=" << e.tombstones_max;
  }
  void operator()(const lifetime_misuse_attempted& e) const {
    out << " rank=" << e.rank << " " << to_string(e.call) << " "
        << core::to_string(e.key);
  }
  void operator()(const lifetime_misuse_answered& e) const {
    out << " rank=" << e.rank << " "
        << (e.error ? core::to_string(*e.error) : "accepted");
  }
  void operator()(const misuse_answered& e) const {
    out << " rank=" << e.rank << " "
        << (e.error ? core::to_string(*e.error) : "accepted");
  }
};

}  // namespace

const char* to_string(collective_op op) {
  switch (op) {
    case collective_op::all_reduce_min:
      return "all_reduce_min";
    case collective_op::all_reduce_max:
      return "all_reduce_max";
    case collective_op::barrier:
      return "barrier";
  }
  return "unknown_op";
}

const char* to_string(ledger_call call) {
  switch (call) {
    case ledger_call::allocate:
      return "allocate";
    case ledger_call::lease:
      return "lease";
    case ledger_call::release:
      return "release";
    case ledger_call::end_lease:
      return "end_lease";
    case ledger_call::quarantine:
      return "quarantine";
    case ledger_call::confirm_quarantine:
      return "confirm_quarantine";
    case ledger_call::release_all:
      return "release_all";
  }
  return "unknown_call";
}

const char* to_string(ignored_call call) {
  switch (call) {
    case ignored_call::decode_abort:
      return "decode_abort";
    case ignored_call::decode_complete:
      return "decode_complete";
    case ignored_call::decode_prealloc:
      return "decode_prealloc";
    case ignored_call::send_chunk_unknown_room:
      return "send_chunk_unknown_room";
    case ignored_call::send_chunk_mismatched_pages:
      return "send_chunk_mismatched_pages";
    case ignored_call::send_chunk_no_siblings:
      return "send_chunk_no_siblings";
    case ignored_call::send_chunk_closed_room:
      return "send_chunk_closed_room";
    case ignored_call::open_open_room:
      return "open_open_room";
    case ignored_call::fail_unknown_room:
      return "fail_unknown_room";
  }
  return "unknown_call";
}

const char* to_string(lifetime_call call) {
  switch (call) {
    case lifetime_call::open:
      return "open";
    case lifetime_call::try_acquire:
      return "try_acquire";
    case lifetime_call::release:
      return "release";
    case lifetime_call::clear:
      return "clear";
  }
  return "unknown_call";
}

std::string describe(const sim_event& e, const std::vector<actor_name>& actors) {
  std::ostringstream out;
  out.imbue(std::locale::classic());  // the same digits whatever the process's global locale
  out << spec::event_line_prefix(e.step, e.time_us, actor_text(e.actor, actors))
      << spec::event_kind_names[e.body.index()];
  std::visit(describer{out}, e.body);
  return out.str();
}

}  // namespace kvsim::sim
