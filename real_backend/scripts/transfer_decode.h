#pragma once
// The decode rank of a transfer script, as its owner thread runs it (rank_thread.h): the
// production decode_receiver with its page ledger, token issuer and verifier, built on that
// thread with the receiver bound to it (core/owner_thread.h); the rank's event loop (step)
// and the steps the script hands it as messages. Only the owner thread calls anything here.
// Reading a request's pages once its transfer is complete is the script's I7 check: bytes
// that are not the request's own.
#include <cstdint>
#include <string>
#include <vector>

#include "core/decode_rank.h"
#include "real_backend/peers_in_process.h"
#include "real_backend/host/steady_clock_port.h"
#include "real_backend/wire/tcp_messenger.h"
#include "real_backend/scripts/transfer_context.h"
#include "real_backend/scripts/wire_tally.h"

namespace kvsim::real {

class decode_actor {
 public:
  decode_actor(transfer_context& context, tcp_messenger& wire);

  // One turn of the event loop: control messages (drain-ACKs, status, chunk-ready), reading
  // and completing every request whose transfer is complete, deadlines.
  void step();

  // The script's steps. Those that return bool are watched: true once done.
  bool prealloc_and_publish(std::size_t r);  // retried while the pool is full
  void abort(std::size_t r);                 // the client went away
  bool ended(std::size_t r) const;           // finished, or its pages quarantined
  bool aborting(std::size_t r) const;
  bool all_ended() const;
  bool wire_quiet() const { return context_.wire.quiet(); }
  std::string counted_text(std::size_t r) const { return context_.watch.counted_text(context_.keys[r]); }

 private:
  struct request {
    bool started = false;
    bool verified = false;  // decode read its pages
  };

  void read_page(core::room_key reader, core::page_index page, std::uint32_t logical);

  transfer_context& context_;
  tallied_messenger net_;
  steady_clock_port clock_;
  peers_in_process peers_;
  // The rank's core, on its link to prefill (the only key it holds after start-up).
  core::decode_rank core_;
  core::page_ledger& ledger_ = core_.ledger();
  core::decode_receiver& receiver_ = core_.receiver();
  std::vector<request> requests_;
};

}  // namespace kvsim::real
