#include "core/events.h"

#include <sstream>

namespace kvsim::core {
namespace {

std::string status_text(const std::optional<kv_status>& status) {
  return status ? to_string(*status) : "absent";
}

struct describer {
  std::ostringstream& out;

  void operator()(const pages_allocated& e) const {
    out << "pages_allocated " << to_string(e.owner) << " " << pages_text(e.pages);
  }
  void operator()(const allocation_refused& e) const {
    out << "allocation_refused " << to_string(e.owner) << " wanted=" << e.pages_wanted
        << " free=" << e.pages_free;
  }
  void operator()(const lease_started& e) const {
    out << "lease_started lease=" << e.lease << " " << to_string(e.owner) << " "
        << to_string(e.role) << " " << pages_text(e.pages);
  }
  void operator()(const lease_ended& e) const {
    out << "lease_ended lease=" << e.lease << " " << to_string(e.owner) << " "
        << pages_text(e.pages);
  }
  void operator()(const lease_quarantined& e) const {
    out << "lease_quarantined lease=" << e.lease << " " << to_string(e.owner) << " "
        << pages_text(e.pages);
  }
  void operator()(const quarantine_confirmed& e) const {
    out << "quarantine_confirmed lease=" << e.lease << " " << to_string(e.owner) << " "
        << pages_text(e.pages);
  }
  void operator()(const release_requested& e) const {
    out << "release_requested " << to_string(e.owner) << " freed=" << pages_text(e.freed_now)
        << " deferred=" << pages_text(e.deferred);
  }
  void operator()(const page_freed& e) const {
    out << "page_freed " << to_string(e.owner) << " page=" << e.page;
  }
  void operator()(const ledger_misuse& e) const {
    out << "ledger_misuse " << to_string(e.error) << " caller=" << to_string(e.caller);
    if (e.page) out << " page=" << *e.page;
    if (e.lease) out << " lease=" << *e.lease;
  }
  void operator()(const room_opened& e) const { out << "room_opened " << to_string(e.key); }
  void operator()(const room_closed& e) const {
    out << "room_closed " << to_string(e.key) << " pending=" << e.pending_leases
        << (e.tombstone ? " tombstone" : "");
  }
  void operator()(const chunk_admitted& e) const {
    out << "chunk_admitted " << to_string(e.key) << " pending=" << e.pending_leases;
  }
  void operator()(const chunk_released& e) const {
    out << "chunk_released " << to_string(e.key) << " pending=" << e.pending_leases;
  }
  void operator()(const room_cleared& e) const { out << "room_cleared " << to_string(e.key); }
  void operator()(const tombstone_evicted& e) const {
    out << "tombstone_evicted " << to_string(e.key);
  }
  void operator()(const lifetime_refused& e) const {
    out << "lifetime_refused " << to_string(e.error) << " " << to_string(e.key);
  }
  void operator()(const status_changed& e) const {
    out << "status_changed " << to_string(e.key) << " " << status_text(e.from) << "->"
        << to_string(e.to);
  }
  void operator()(const status_update_ignored& e) const {
    out << "status_update_ignored " << to_string(e.key) << " current=" << status_text(e.current)
        << " attempted=" << to_string(e.attempted) << " reason=" << to_string(e.reason);
  }
  void operator()(const token_issued& e) const {
    out << "token_issued " << to_string(e.key) << " nonce=" << e.nonce;
  }
  void operator()(const token_accepted& e) const {
    out << "token_accepted " << to_string(e.key) << " nonce=" << e.nonce;
  }
  void operator()(const token_rejected& e) const {
    out << "token_rejected " << to_string(e.reason) << " expected=" << to_string(e.expected)
        << " claimed=" << to_string(e.claimed) << " nonce=" << e.nonce;
  }
};

}  // namespace

const char* to_string(status_ignore_reason reason) {
  switch (reason) {
    case status_ignore_reason::failed_for_absent_room:
      return "failed_for_absent_room";
    case status_ignore_reason::regression:
      return "regression";
    case status_ignore_reason::terminal:
      return "terminal";
    case status_ignore_reason::unchanged:
      return "unchanged";
  }
  return "unknown_reason";
}

std::string describe(const event& e) {
  std::ostringstream out;
  out << "rank " << e.rank << " ";
  std::visit(describer{out}, e.body);
  return out.str();
}

}  // namespace kvsim::core
