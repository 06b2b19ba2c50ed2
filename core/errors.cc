#include "core/errors.h"

namespace kvsim::core {

const char* to_string(ledger_error error) {
  switch (error) {
    case ledger_error::empty_request:
      return "empty_request";
    case ledger_error::not_enough_free_pages:
      return "not_enough_free_pages";
    case ledger_error::page_out_of_range:
      return "page_out_of_range";
    case ledger_error::duplicate_page:
      return "duplicate_page";
    case ledger_error::page_not_owned:
      return "page_not_owned";
    case ledger_error::not_owner:
      return "not_owner";
    case ledger_error::double_release:
      return "double_release";
    case ledger_error::page_retiring:
      return "page_retiring";
    case ledger_error::unknown_lease:
      return "unknown_lease";
    case ledger_error::lease_underflow:
      return "lease_underflow";
    case ledger_error::lease_quarantined:
      return "lease_quarantined";
    case ledger_error::lease_not_quarantined:
      return "lease_not_quarantined";
    case ledger_error::page_not_free:
      return "page_not_free";
  }
  return "unknown_ledger_error";
}

const char* to_string(lifetime_error error) {
  switch (error) {
    case lifetime_error::unknown_room:
      return "unknown_room";
    case lifetime_error::already_open:
      return "already_open";
    case lifetime_error::tombstoned:
      return "tombstoned";
    case lifetime_error::room_closed:
      return "room_closed";
    case lifetime_error::lease_underflow:
      return "lease_underflow";
    case lifetime_error::leases_pending:
      return "leases_pending";
  }
  return "unknown_lifetime_error";
}

const char* to_string(token_rejection rejection) {
  switch (rejection) {
    case token_rejection::forged:
      return "forged";
    case token_rejection::foreign_room:
      return "foreign_room";
    case token_rejection::stale_generation:
      return "stale_generation";
    case token_rejection::future_generation:
      return "future_generation";
    case token_rejection::duplicate:
      return "duplicate";
    case token_rejection::foreign_issuer:
      return "foreign_issuer";
    case token_rejection::retired:
      return "retired";
    case token_rejection::unproven:
      return "unproven";
    case token_rejection::not_a_party:
      return "not_a_party";
    case token_rejection::not_issued:
      return "not_issued";
  }
  return "unknown_token_rejection";
}

}  // namespace kvsim::core
