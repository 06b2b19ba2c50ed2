#pragma once
// The prefill rank of a transfer script, as its owner thread runs it (rank_thread.h): the
// production prefill_sender with its page ledger, room lifetimes, status table and token
// verifier, built on that thread with the sender bound to it (core/owner_thread.h); the
// rank's event loop (step) and the steps the script hands it as messages. Only the owner
// thread calls anything here.
//
// Besides the protocol, the rank does the script's landing check when a transfer ends (or
// reaches its gate), at the poll that reveals the end and before the sender hears of it: the
// sender may then release the lease or send the drain-ACK that lets decode free the pages,
// and decode's thread would act on that at once. I1 when a page was read from a source page
// that this rank had freed or given away, or written into a destination page that decode no
// longer held for the request (decode's ledger as its events tell it: page_owner_view); I7
// when the destination page does not hold the request's bytes afterwards.
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "core/prefill_rank.h"
#include "real_backend/data_plane.h"
#include "real_backend/wire/tcp_messenger.h"
#include "real_backend/scripts/transfer_context.h"
#include "real_backend/scripts/wire_tally.h"

namespace kvsim::real {

class prefill_actor {
 public:
  prefill_actor(transfer_context& context, tcp_messenger& wire, gated_transfer_engine& engine);

  // One turn of the event loop: control messages (metadata, ABORT), the sender's poll, the
  // landing check of every transfer that ended, each request's outcome sent to decode once
  // its transfer is over.
  void step();

  // The script's steps. Those that return bool are watched: true once done.
  bool open_request(std::size_t r);         // source pages (retried while the pool is full)
  bool send_when_published(std::size_t r);  // decode's metadata in, or the room closed
  bool check_at_gate(std::size_t gate);     // its transfer waits there: earlier pages landed
  void hold(std::size_t r);                 // aborted while its gate holds its transfer
  bool saw_abort(std::size_t r) const;
  void open_held_gates();
  bool over(std::size_t r) const;  // its outcome sent to decode, nothing of it in flight
  bool all_over() const;           // every request over and forgotten by the sender

 private:
  // The transfer engine as the sender sees it: whatever a poll (or cancel) finds ended is
  // checked before the answer goes back to the sender.
  class checked_engine final : public core::transfer_engine {
   public:
    explicit checked_engine(prefill_actor& actor) : actor_(actor) {}
    core::transfer_handle submit(const core::transfer_request& request) override;
    core::transfer_poll poll(core::transfer_handle handle) override;
    bool cancel(core::transfer_handle handle) override;

   private:
    prefill_actor& actor_;
  };

  struct request {
    std::vector<core::page_index> source;
    bool started = false;
    bool opened = false;
    bool chunks_sent = false;
    bool posted = false;  // the outcome went to decode and the request was finished here
    bool held = false;    // aborted while its gate held it, transfer not ended yet
  };

  void check_ended();
  void send_chunks(std::size_t r);
  void post_if_done(std::size_t r);
  bool any_held_in_flight() const;
  std::uint32_t logical_of(const core::transfer_request& t, std::size_t i) const;
  void check_landed(const core::transfer_request& t, std::uint32_t from, std::uint32_t to);

  transfer_context& context_;
  gated_transfer_engine& engine_;
  checked_engine checked_;  // what the sender submits to and polls
  tallied_messenger net_;
  // The rank's core, on its link to decode (the only key it holds after start-up).
  core::prefill_rank core_;
  core::page_ledger& ledger_ = core_.ledger();
  core::room_lifetimes& lifetimes_ = core_.lifetimes();
  core::transfer_status_table& statuses_ = core_.statuses();
  core::prefill_sender& sender_ = core_.sender();
  std::vector<request> requests_;
  std::map<core::room_key, std::map<core::rank_id, std::vector<core::page_index>>> metadata_;
  std::set<core::room_key> aborts_seen_;
};

}  // namespace kvsim::real
