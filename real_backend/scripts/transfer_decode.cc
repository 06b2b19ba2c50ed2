#include "real_backend/scripts/transfer_decode.h"

#include <optional>
#include <string>

#include "real_backend/host/thread_identity.h"
#include "real_backend/wire/token_epoch.h"

namespace kvsim::real {

decode_actor::decode_actor(transfer_context& context, tcp_messenger& wire)
    : context_(context),
      net_(wire, context.wire),
      core_(decode_rank, {net_, clock_, context.log, peers_},
            core::link_keyring(decode_rank, derive_token_key(context.secret), {prefill_rank}),
            core::decode_rank_options{.pages_total = context.spec.topology.pages_per_rank,
                                      .token_epoch = draw_token_epoch(),
                                      .v = context.variant}),
      requests_(context.spec.requests.size()) {
  // Built on the owner thread, which owns the receiver from here on.
  receiver_.bind_owner(host_threads());
}

void decode_actor::step() {
  std::int64_t handled = 0;
  while (auto message = net_.try_receive()) {
    ++handled;
    receiver_.on_message(*message);
  }
  for (std::size_t r = 0; r < requests_.size(); ++r) {
    request& st = requests_[r];
    const core::room_key key = context_.keys[r];
    if (!st.started || st.verified || !receiver_.transfer_complete(key)) continue;
    const std::vector<core::page_index>& pages = receiver_.pages(key);
    for (std::uint32_t j = 0; j < pages.size(); ++j) read_page(key, pages[j], j);
    receiver_.complete(key);
    st.verified = true;
  }
  receiver_.check_deadlines();
  // Last: a request that a message ended is complete by now (the script asks after this).
  context_.wire.handled(handled);
}

bool decode_actor::prealloc_and_publish(std::size_t r) {
  const core::room_key key = context_.keys[r];
  if (!receiver_.prealloc(key, context_.spec.requests[r].pages, {prefill_rank})) return false;
  requests_[r].started = true;
  receiver_.publish(key);
  return true;
}

void decode_actor::abort(std::size_t r) { receiver_.abort(context_.keys[r], std::nullopt); }

bool decode_actor::ended(std::size_t r) const {
  return receiver_.finished(context_.keys[r]) || receiver_.quarantined(context_.keys[r]);
}

bool decode_actor::aborting(std::size_t r) const { return receiver_.aborting(context_.keys[r]); }

bool decode_actor::all_ended() const {
  for (std::size_t r = 0; r < requests_.size(); ++r) {
    if (!ended(r)) return false;
  }
  return true;
}

void decode_actor::read_page(core::room_key reader, core::page_index page, std::uint32_t logical) {
  const page_check c = context_.decode_pages.verify(page, reader, logical);
  if (c.intact) return;
  std::string found = "unrecognisable bytes";
  if (c.found) {
    const core::room_key writer{c.found->room, c.found->generation};
    found = writer == reader
                ? "its own request's bytes, but not those of that logical page"
                : "bytes written for " + core::to_string(writer) + " (its logical page " +
                      std::to_string(c.found->logical_page) + ")";
  }
  context_.findings.add("I7: " + core::to_string(reader) + " read page " + std::to_string(page) +
                        " on rank " + std::to_string(decode_rank) + " (its logical page " +
                        std::to_string(logical) + ") and found " + found + ", read back from " +
                        context_.plane_text);
}

}  // namespace kvsim::real
