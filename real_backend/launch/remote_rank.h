#pragma once
// A rank process as the script sees it (script_rank.h): steps go down its step link (the
// socketpair of the parent that started it, or the control plane from rank 0: step_link.h),
// answers and fired watches come back on a reader thread. When the process says it
// failed, or its channel closes, every waiting ask and watch is released and finds why.
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "real_backend/scripts/script_rank.h"
#include "real_backend/launch/step_link.h"

namespace kvsim::real {

class remote_rank final : public script_rank {
 public:
  remote_rank(std::string name, std::unique_ptr<step_link> link);
  ~remote_rank() override;

  // Waits for the process to say `word` ("listening", "ready") within `timeout`. Its step
  // link closing first throws peer_gone; anything else it says, real_backend_error.
  void expect(const std::string& word, std::chrono::milliseconds timeout);
  // The same for a slice of a longer wait: false when nothing came within `within`.
  bool heard(const std::string& word, std::chrono::milliseconds within);
  // Starts the reader thread (after the start-up words).
  void serve();

  // One request of the step protocol ("findings", "run", ...: its verb and any arguments; the
  // id goes in after the verb) and its answer's text.
  std::string request(const std::string& verb_and_args, clock_type::time_point deadline);

  std::string ask(transfer_step step, std::size_t r, clock_type::time_point deadline) override;
  void watch(transfer_step step, std::size_t r, std::shared_ptr<step_signal> done) override;
  void rethrow_if_failed() override;
  // The rank's findings, as JSON text (rank_process.h).
  std::string findings_json(clock_type::time_point deadline);
  // The rank's recorded events, as JSON text (rank_process.h).
  std::string events_json(clock_type::time_point deadline);
  // Ending, in two phases: stop() returns once the rank's thread has stopped (it reads the
  // control plane no more); release() lets the process exit. Every rank is stopped before
  // any is released, so no rank sees its peer's links close while it still runs.
  void stop(clock_type::time_point deadline);
  void release();
  // Gives up on the rank (another of the run failed): every waiting ask and watch is
  // released with `why`, and no more are sent.
  void abandon(const std::string& why) { fail(why); }
  // How the rank's process ended, when it has (rank_spawn.h); asked when its step link closes,
  // so that the failure says "was killed by signal 9" rather than only that it ended. Before
  // serve().
  void describe_end_with(std::function<std::optional<std::string>()> describe) {
    describe_end_ = std::move(describe);
  }

 private:
  void read_loop();
  void cancel_retired();
  void fail(const std::string& why);

  std::string name_;
  std::unique_ptr<step_link> channel_;
  std::mutex mutex_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::promise<std::string>> asks_;
  std::map<std::uint64_t, std::shared_ptr<step_signal>> watches_;
  std::string failure_;
  bool stopping_ = false;
  std::function<std::optional<std::string>()> describe_end_;
  std::thread reader_;
};

}  // namespace kvsim::real
