#include "real_backend/launch/remote_rank.h"

#include <sstream>
#include <vector>

#include "real_backend/errors.h"

namespace kvsim::real {

remote_rank::remote_rank(std::string name, std::unique_ptr<step_link> link)
    : name_(std::move(name)), channel_(std::move(link)) {}

remote_rank::~remote_rank() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  if (reader_.joinable()) reader_.join();
}

void remote_rank::expect(const std::string& word, std::chrono::milliseconds timeout) {
  if (!heard(word, timeout)) throw real_backend_error(name_ + " did not say '" + word + "' in time");
}

bool remote_rank::heard(const std::string& word, std::chrono::milliseconds within) {
  std::optional<std::string> line;
  try {
    line = channel_->read_line(within);
  } catch (const peer_gone& e) {
    throw peer_gone(name_ + " ended before it said '" + word + "' (" + e.what() + ")");
  } catch (const real_backend_error& e) {
    throw real_backend_error(name_ + " ended before it said '" + word + "' (" + e.what() + ")");
  }
  if (!line) return false;
  if (line->rfind("failed ", 0) == 0) throw real_backend_error(name_ + ": " + line->substr(7));
  if (*line != word) throw real_backend_error(name_ + " said '" + *line + "', not '" + word + "'");
  return true;
}

void remote_rank::serve() { reader_ = std::thread([this] { read_loop(); }); }

void remote_rank::read_loop() {
  for (;;) {
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    std::optional<std::string> line;
    try {
      line = channel_->read_line(std::chrono::milliseconds(50));
    } catch (const real_backend_error& e) {
      const std::optional<std::string> how = describe_end_ ? describe_end_() : std::nullopt;
      fail(how ? *how + " during the run" : name_ + " ended (" + e.what() + ")");
      return;
    }
    if (!line) continue;
    std::istringstream in(*line);
    std::string verb;
    in >> verb;
    if (verb == "failed") {
      fail(name_ + ": " + line->substr(7));
      return;
    }
    std::uint64_t id = 0;
    in >> id;
    const std::lock_guard lock(mutex_);
    if (verb == "answer") {
      const auto it = asks_.find(id);
      if (it == asks_.end()) continue;
      std::string text = line->substr(std::min(line->size(), line->find(' ', 7) + 1));
      it->second.set_value(std::move(text));
      asks_.erase(it);
    } else if (verb == "fired") {
      const auto it = watches_.find(id);
      if (it == watches_.end()) continue;
      it->second->set();
      watches_.erase(it);
    }
  }
}

void remote_rank::fail(const std::string& why) {
  const std::lock_guard lock(mutex_);
  if (failure_.empty()) failure_ = why;
  for (auto& [id, answer] : asks_) answer.set_exception(std::make_exception_ptr(real_backend_error(failure_)));
  asks_.clear();
  for (auto& [id, done] : watches_) done->set();
  watches_.clear();
}

void remote_rank::rethrow_if_failed() {
  const std::lock_guard lock(mutex_);
  if (!failure_.empty()) throw real_backend_error(failure_);
}

std::string remote_rank::request(const std::string& verb_and_args, clock_type::time_point deadline) {
  cancel_retired();
  std::future<std::string> answer;
  std::uint64_t id = 0;
  {
    const std::lock_guard lock(mutex_);
    if (!failure_.empty()) throw real_backend_error(failure_);
    id = next_id_++;
    answer = asks_[id].get_future();
  }
  const auto space = verb_and_args.find(' ');
  const std::string line = space == std::string::npos
                               ? verb_and_args + " " + std::to_string(id)
                               : verb_and_args.substr(0, space) + " " + std::to_string(id) +
                                     verb_and_args.substr(space);
  if (!channel_->write_line(line)) fail(name_ + " ended");
  if (answer.wait_until(deadline) != std::future_status::ready) {
    rethrow_if_failed();
    throw real_backend_error(name_ + " did not answer the script in time");
  }
  return answer.get();
}

std::string remote_rank::ask(transfer_step step, std::size_t r, clock_type::time_point deadline) {
  return request("ask " + std::string(to_string(step)) + " " + std::to_string(r), deadline);
}

void remote_rank::watch(transfer_step step, std::size_t r, std::shared_ptr<step_signal> done) {
  cancel_retired();
  std::uint64_t id = 0;
  {
    const std::lock_guard lock(mutex_);
    if (!failure_.empty()) {
      done->set();
      return;
    }
    id = next_id_++;
    watches_[id] = done;
  }
  if (!channel_->write_line("watch " + std::to_string(id) + " " + std::string(to_string(step)) +
                           " " + std::to_string(r))) {
    fail(name_ + " ended");
  }
}

// A watch the script retired (its signal set by the other rank's watch or by a timeout) is
// cancelled on the rank too, so that the rank stops checking it.
void remote_rank::cancel_retired() {
  std::vector<std::uint64_t> retired;
  {
    const std::lock_guard lock(mutex_);
    for (auto it = watches_.begin(); it != watches_.end();) {
      if (it->second->is_set()) {
        retired.push_back(it->first);
        it = watches_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const std::uint64_t id : retired) (void)channel_->write_line("cancel " + std::to_string(id));
}

std::string remote_rank::findings_json(clock_type::time_point deadline) {
  return request("findings", deadline);
}

std::string remote_rank::events_json(clock_type::time_point deadline) {
  return request("events", deadline);
}

// A rank that never got as far as serving (it failed to start, or a peer did) has no thread
// to stop and nobody to hear its answer: releasing it (its channel closing) ends it.
void remote_rank::stop(clock_type::time_point deadline) {
  if (!reader_.joinable()) return;
  (void)request("stop", deadline);
}

void remote_rank::release() { (void)channel_->write_line("exit"); }

}  // namespace kvsim::real
