#pragma once
// The page ledger: who owns each KV page of one rank's pool, and who may still touch it.
//
// Every page is free or owned by exactly one (room, generation). An in-flight transfer holds
// a lease on the pages it reads (source) or writes (destination). When the owner releases a
// page that is still leased, the page is not freed: it becomes *retiring* and is freed when
// its last lease ends. A lease whose end the transport cannot confirm (a deadline passed but
// the copy may still run, DOMAIN.md B12) is quarantined: its pages stay out of circulation
// until the transport confirms. This is the rule that removes the page-42 corruption of the
// seed change: a freed page is never handed to a new request while an old copy can land in it.
//
// Misuse is refused with a ledger_error, changes nothing, and is emitted as ledger_misuse.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/events.h"
#include "core/ids.h"
#include "core/page_set.h"
#include "core/ports.h"
#include "core/result.h"
#include "core/variant.h"

namespace kvsim::core {

// LIFO hands out the most recently freed page first: the production allocator's shape, and
// the one that makes a premature free visible at once (freed page 42 is B's next page).
enum class allocation_order : std::uint8_t { lifo, fifo };

enum class release_policy : std::uint8_t {
  defer_while_leased,  // production: leased pages retire and are freed by the last lease end
#if KVSIM_HISTORICAL_BUGS
  // Historical bug variant (DOMAIN.md B1/B3): release frees at once even while a transfer
  // still reads or writes the page. Exists only so the harness can prove it catches it, and
  // only in the harness's build (core/variant.h).
  free_while_leased,
#endif
};

struct ledger_options {
  allocation_order order = allocation_order::lifo;
  release_policy release = release_policy::defer_while_leased;
};

class page_ledger {
 public:
  page_ledger(rank_id rank, std::uint32_t pages_total, event_sink& sink,
              ledger_options options = {});

  result<std::vector<page_index>, ledger_error> allocate(room_key owner, std::uint32_t count);
  // Exactly `pages`, in the order given: a timeline replayed from a production log pins the
  // pages its allocator handed out. The list is checked like every other (empty, out of
  // range, named twice), then every page must be free (an owned, retiring or quarantined one
  // is page_not_free): a refusal is misuse, so a caller waits until ledger reads say the
  // pages are free. The pages left on the free list keep their order; emits pages_allocated,
  // as allocate does.
  result<std::vector<page_index>, ledger_error> allocate_exact(room_key owner,
                                                               std::span<const page_index> pages);
  result<lease_id, ledger_error> lease(room_key owner, lease_role role,
                                       std::span<const page_index> pages);
  status<ledger_error> end_lease(lease_id lease);
  status<ledger_error> quarantine(lease_id lease);
  status<ledger_error> confirm_quarantine(lease_id lease);
  // Pages that are still leased retire instead of being freed.
  status<ledger_error> release(room_key owner, std::span<const page_index> pages);
  // Releases every page of `owner` that is not already retiring (may be none).
  status<ledger_error> release_all(room_key owner);

  std::uint32_t pages_total() const { return static_cast<std::uint32_t>(pages_.size()); }
  std::uint32_t free_count() const { return static_cast<std::uint32_t>(free_list_.size()); }
  std::uint32_t owned_count() const;     // owned and not retiring
  std::uint32_t retiring_count() const;  // release requested, waiting for leases
  std::uint32_t leased_page_count() const;
  std::uint32_t quarantined_page_count() const;
  std::uint32_t active_lease_count() const { return static_cast<std::uint32_t>(leases_.size()); }

  std::optional<room_key> owner_of(page_index page) const;
  std::uint32_t lease_count(page_index page) const;
  bool is_retiring(page_index page) const;
  std::vector<page_index> pages_of(room_key owner) const;

  // Empty when every ledger invariant holds; otherwise one line per broken invariant.
  std::vector<std::string> check_consistency() const;

 private:
  struct page_record {
    std::optional<room_key> owner;
    std::uint32_t leases = 0;              // active leases, quarantined ones included
    std::uint32_t quarantined_leases = 0;  // of which quarantined
    bool retiring = false;
  };
  struct lease_record {
    room_key owner;
    lease_role role = lease_role::source;
    std::vector<page_index> pages;
    bool quarantined = false;
  };

  std::optional<ledger_error> validate_page_list(std::span<const page_index> pages,
                                                 std::optional<page_index>& culprit) const;
  // The first page of `pages` that `owner` may not use, and why.
  std::optional<ledger_error> ownership_error(room_key owner, std::span<const page_index> pages,
                                              ledger_error if_free, ledger_error if_retiring,
                                              std::optional<page_index>& culprit) const;
  // Why a call naming `lease` must be refused: never issued, already ended, or in the wrong
  // quarantine state for this call (`wrong_state` then).
  std::optional<ledger_error> lease_call_error(lease_id lease, bool wants_quarantined,
                                               ledger_error wrong_state) const;
  status<ledger_error> refuse_lease_call(ledger_error error, lease_id lease);
  void finish_lease(lease_id lease);
  void free_page(page_index page);
  page_index take_free_page();
  // Takes `pages` (all free) off the free list, keeping the order of the rest.
  void take_free_pages(std::span<const page_index> pages);
  void refuse(ledger_error error, room_key caller, std::optional<page_index> page,
              std::optional<lease_id> lease);
  void emit(event_body body);

  rank_id rank_;
  event_sink& sink_;
  ledger_options options_;
  std::vector<page_record> pages_;
  std::deque<page_index> free_list_;
  std::map<lease_id, lease_record> leases_;  // ordered by id: deterministic iteration
  // The pages each owner holds (retiring ones included): release_all and pages_of cost
  // O(k log n) for the owner's k pages, not a scan of the pool.
  std::map<room_key, page_set> owned_by_;
  lease_id next_lease_ = 1;                  // ids are never reused, so a stale id is detected
};

}  // namespace kvsim::core
