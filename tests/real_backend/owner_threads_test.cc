// The threading contract on real threads (core/owner_thread.h), no GPU needed: a prefill and a
// decode std::thread each build their core component with its state, bind it with the real
// backend's thread identity, and talk only through an in-process messenger. Each thread
// calling only its own component carries a transfer and an abort to their ends; a thread
// that calls the other's component (instead of sending it a message) dies at that call.
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>
#include <variant>

#include "core/abort_token.h"
#include "core/decode_receiver.h"
#include "core/page_ledger.h"
#include "core/prefill_sender.h"
#include "core/room_lifetimes.h"
#include "core/transfer_status_table.h"
#include "real_backend/host/event_log.h"
#include "real_backend/peers_in_process.h"
#include "real_backend/host/steady_clock_port.h"
#include "real_backend/host/thread_identity.h"
#include "real_backend/wire/token_epoch.h"
#include "tests/real_backend/in_process_messenger.h"

namespace kvsim::real::owner_threads_test {
namespace {

using core::control_kind;
using core::room_key;

constexpr core::rank_id prefill = 0;
constexpr core::rank_id decode = 1;
constexpr std::uint32_t pool = 8;
constexpr room_key served{7, 0};   // transferred to its end
constexpr room_key aborted{8, 0};  // aborted by decode before any chunk
constexpr auto patience = std::chrono::seconds(10);

core::cluster_key test_key() {
  core::cluster_key key;
  for (std::size_t i = 0; i < key.bytes.size(); ++i) key.bytes[i] = static_cast<std::uint8_t>(i);
  return key;
}

// Every transfer has ended by its first poll.
class instant_transfers final : public core::transfer_engine {
 public:
  core::transfer_handle submit(const core::transfer_request&) override { return next_++; }
  core::transfer_poll poll(core::transfer_handle) override {
    return core::transfer_poll::succeeded;
  }
  bool cancel(core::transfer_handle) override { return true; }

 private:
  core::transfer_handle next_ = 1;
};

// A prefill rank's core objects, built by the thread that constructs it.
struct prefill_rank {
  prefill_rank(testing::in_process_wire& wire, event_log& log)
      : net(wire, prefill),
        ledger(prefill, pool, log),
        lifetimes(prefill, log, 16),
        statuses(prefill, log),
        tokens(prefill, test_key(), log),
        sender(prefill, {transfers, net, log}, {ledger, lifetimes, statuses, tokens},
               core::variant::safe()) {}
  testing::in_process_messenger net;
  instant_transfers transfers;
  core::page_ledger ledger;
  core::room_lifetimes lifetimes;
  core::transfer_status_table statuses;
  core::abort_token_verifier tokens;
  core::prefill_sender sender;
};

// A decode rank's.
struct decode_rank {
  decode_rank(testing::in_process_wire& wire, event_log& log)
      : net(wire, decode),
        ledger(decode, pool, log),
        issuer(decode, test_key(), draw_token_epoch(), log),
        tokens(decode, test_key(), log),
        receiver(decode, {net, clock, log, peers}, {ledger, issuer, tokens},
                 core::variant::safe()) {}
  testing::in_process_messenger net;
  steady_clock_port clock;
  peers_in_process peers;
  core::page_ledger ledger;
  core::abort_token_issuer issuer;
  core::abort_token_verifier tokens;
  core::decode_receiver receiver;
};

// The prefill thread's loop, on its own sender only: serve `served` once its metadata is
// in; answer the ABORT of `aborted` (its drain-ACK goes out at once: nothing in flight).
std::string run_prefill(prefill_rank& p) {
  bool served_done = false;
  bool abort_done = false;
  while (!(served_done && abort_done)) {
    const auto m = p.net.take(patience);
    if (!m) return "prefill heard nothing for 10 s";
    if (m->kind == control_kind::metadata) {
      const auto source = p.ledger.allocate(m->key, static_cast<std::uint32_t>(m->pages.size()));
      if (!source) return "prefill's pool is full";
      // The served request's decode rank hears its outcome from the sender itself (a
      // chunk_ready proven under their link's key, which decode requires).
      const std::vector<core::rank_id> told =
          m->key == served ? std::vector<core::rank_id>{decode} : std::vector<core::rank_id>{};
      if (!p.sender.open(m->key, source.value(), told)) return "prefill could not open a room";
      if (m->key != served) continue;
      if (!p.sender.send_chunk(served, decode, source.value(), m->pages, 1)) return "refused";
      while (p.sender.in_flight(served)) p.sender.poll();
      p.sender.finish(served);
      served_done = true;
    } else if (m->kind == control_kind::abort) {
      p.sender.on_abort(*m);
      p.sender.finish(m->key);
      abort_done = true;
    }
  }
  return "";
}

// The decode thread's, on its own receiver only: both requests published, `aborted`
// aborted, messages handled until both have finished.
std::string run_decode(decode_rank& d) {
  for (const room_key key : {served, aborted}) {
    if (!d.receiver.prealloc(key, 2, {prefill})) return "decode's pool is full";
    d.receiver.publish(key);
  }
  d.receiver.abort(aborted, std::nullopt);
  while (!(d.receiver.finished(served) && d.receiver.finished(aborted))) {
    const auto m = d.net.take(patience);
    if (!m) return "decode heard nothing for 10 s";
    d.receiver.on_message(*m);
    if (!d.receiver.finished(served) && d.receiver.transfer_complete(served)) {
      d.receiver.complete(served);
    }
  }
  return "";
}

struct rank_result {
  std::string failure;
  std::uint64_t thread = 0;
  std::uint32_t free_pages = 0;
};

TEST(ThreadIdentity, NamesTheCallingThreadTheSameEachTimeAndApartFromAnother) {
  const core::thread_identity& identity = host_threads();
  const std::uint64_t here = identity.current_thread();
  EXPECT_EQ(identity.current_thread(), here);
  std::uint64_t there = here;
  std::thread other([&] { there = identity.current_thread(); });
  other.join();
  EXPECT_NE(there, here);
}

TEST(OwnerThreads, EachThreadCallingOnlyItsOwnComponentCarriesATransferAndAnAbortThrough) {
  event_log log;  // the one shared sink: it serialises emit()
  testing::in_process_wire wire;
  rank_result p;
  rank_result d;
  std::thread prefill_thread([&] {
    prefill_rank rank(wire, log);
    rank.sender.bind_owner(host_threads());
    p.thread = host_threads().current_thread();
    p.failure = run_prefill(rank);
    p.free_pages = rank.ledger.free_count();
  });
  std::thread decode_thread([&] {
    decode_rank rank(wire, log);
    rank.receiver.bind_owner(host_threads());
    d.thread = host_threads().current_thread();
    d.failure = run_decode(rank);
    d.free_pages = rank.ledger.free_count();
  });
  prefill_thread.join();
  decode_thread.join();

  EXPECT_EQ(p.failure, "");
  EXPECT_EQ(d.failure, "");
  EXPECT_NE(p.thread, d.thread);
  EXPECT_EQ(p.free_pages, pool);
  EXPECT_EQ(d.free_pages, pool);
  // The protocol went through the messages: a drain-ACK sent by prefill and counted by
  // decode, and both requests finished on decode.
  std::size_t acks_sent = 0;
  std::size_t acks_counted = 0;
  std::size_t finished = 0;
  for (const core::event& e : log.events()) {
    if (std::holds_alternative<core::drain_ack_sent>(e.body) && e.rank == prefill) ++acks_sent;
    if (std::holds_alternative<core::drain_ack_counted>(e.body) && e.rank == decode) {
      ++acks_counted;
    }
    if (std::holds_alternative<core::request_finished>(e.body) && e.rank == decode) ++finished;
  }
  EXPECT_EQ(acks_sent, 1u);
  EXPECT_EQ(acks_counted, 1u);
  EXPECT_EQ(finished, 2u);
}

// The decode thread builds and binds its receiver; the prefill thread then hands it a
// message by calling it directly instead of sending it.
void prefill_thread_calls_the_decode_receiver() {
  event_log log;
  testing::in_process_wire wire;
  std::promise<decode_rank*> built;
  std::promise<void> done;
  std::thread decode_thread([&] {
    decode_rank rank(wire, log);
    rank.receiver.bind_owner(host_threads());
    (void)rank.receiver.prealloc(served, 2, {prefill});
    built.set_value(&rank);
    done.get_future().wait();
  });
  decode_rank* other = built.get_future().get();
  std::thread prefill_thread([&] {
    other->receiver.on_message({control_kind::chunk_ready, prefill, served, std::nullopt, {}, {}});
  });
  prefill_thread.join();
  done.set_value();
  decode_thread.join();
}

// The prefill thread builds and binds its sender; the decode thread polls it.
void decode_thread_polls_the_prefill_sender() {
  event_log log;
  testing::in_process_wire wire;
  std::promise<prefill_rank*> built;
  std::promise<void> done;
  std::thread prefill_thread([&] {
    prefill_rank rank(wire, log);
    rank.sender.bind_owner(host_threads());
    rank.sender.poll();  // its owner: fine
    built.set_value(&rank);
    done.get_future().wait();
  });
  prefill_rank* other = built.get_future().get();
  std::thread decode_thread([&] { other->sender.poll(); });
  decode_thread.join();
  done.set_value();
  prefill_thread.join();
}

// "threadsafe": the death test re-runs this binary instead of forking a process that has
// threads of its own.
TEST(OwnerThreadsDeathTest, APrefillThreadCallingTheDecodeReceiverDiesAtThatCall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(prefill_thread_calls_the_decode_receiver(),
               "a core component was called from a thread that does not own it");
}

TEST(OwnerThreadsDeathTest, ADecodeThreadPollingThePrefillSenderDiesAtThatCall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(decode_thread_polls_the_prefill_sender(),
               "a core component was called from a thread that does not own it");
}

}  // namespace
}  // namespace kvsim::real::owner_threads_test
