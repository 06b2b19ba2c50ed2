#include "tests/real_backend/host_data_plane.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace kvsim::testing {
namespace {

// One lock for every byte of host "device" memory: copies run on stream threads while the
// script verifies pages.
std::mutex memory_mutex;

class host_stream {
 public:
  host_stream() : worker_([this] { run(); }) {}
  ~host_stream() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }

  void enqueue(std::function<void()> op) {
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back(std::move(op));
      ++enqueued_;
    }
    changed_.notify_all();
  }
  // Done once every operation queued so far has run.
  std::uint64_t mark() {
    const std::lock_guard lock(mutex_);
    return enqueued_;
  }
  bool done(std::uint64_t ticket) {
    const std::lock_guard lock(mutex_);
    return completed_ >= ticket;
  }
  void wait_idle() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return completed_ == enqueued_; });
  }
  // Blocks until the operations queued up to `ticket` have run.
  void wait_for(std::uint64_t ticket) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this, ticket] { return completed_ >= ticket; });
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      std::function<void()> op = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      op();
      lock.lock();
      ++completed_;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  std::uint64_t enqueued_ = 0;
  std::uint64_t completed_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

class host_gate final : public real::hold_gate {
 public:
  ~host_gate() override { open(); }
  void hold(host_stream& stream) {
    stream.enqueue([this] {
      arrived_ = true;
      while (!open_) std::this_thread::sleep_for(std::chrono::microseconds(100));
    });
  }
  bool reached() const override { return arrived_; }
  void open() override { open_ = true; }
  bool is_open() const override { return open_; }

 private:
  std::atomic<bool> open_{false};
  std::atomic<bool> arrived_{false};
};

class host_pages final : public real::page_memory {
 public:
  host_pages(std::uint32_t pages, std::uint32_t page_bytes)
      : pages_(pages), page_bytes_(page_bytes), bytes_(std::size_t{pages} * page_bytes, 0) {}
  std::uint32_t pages() const override { return pages_; }
  std::uint32_t page_bytes() const override { return page_bytes_; }
  void write_canary(core::page_index page, core::room_key writer, std::uint32_t logical) override {
    const std::lock_guard lock(memory_mutex);
    real::fill_canary_host(at(page), page_bytes_, {writer.room, writer.generation, logical});
  }
  real::page_check verify(core::page_index page, core::room_key reader,
                          std::uint32_t logical) override {
    const std::lock_guard lock(memory_mutex);
    real::page_check c;
    c.intact =
        real::matches_canary_host(at(page), page_bytes_, {reader.room, reader.generation, logical});
    c.found = real::owner_of_bytes_host(at(page), page_bytes_);
    return c;
  }
  std::uint8_t* at(core::page_index page) {
    if (page >= pages_) throw std::out_of_range("host page outside the pool");
    return bytes_.data() + std::size_t{page} * page_bytes_;
  }

 private:
  std::uint32_t pages_;
  std::uint32_t page_bytes_;
  std::vector<std::uint8_t> bytes_;
};

class host_engine final : public real::gated_transfer_engine {
 public:
  host_engine(host_pages& source, std::map<core::rank_id, host_pages*> destinations)
      : source_(source), destinations_(std::move(destinations)), streams_(4) {}
  ~host_engine() override {
    for (auto& s : streams_) s.wait_idle();
  }

  core::transfer_handle submit(const core::transfer_request& request) override {
    host_stream& stream = streams_[next_stream_++ % streams_.size()];
    host_pages& destination = *destinations_.at(request.destination_rank);
    record r{request, 0, core::transfer_poll::in_flight, nullptr, 0};
    const auto hold = holds_.find(request.owner);
    for (std::size_t i = 0; i < request.source_pages.size(); ++i) {
      if (hold != holds_.end() && hold->second.second == i) {
        hold->second.first->hold(stream);
        r.held_by = hold->second.first;
        r.before_page = hold->second.second;
      }
      const core::page_index from = request.source_pages[i];
      const core::page_index to = request.destination_pages[i];
      stream.enqueue([this, &destination, from, to] {
        const std::lock_guard lock(memory_mutex);
        std::memcpy(destination.at(to), source_.at(from), source_.page_bytes());
      });
    }
    r.ticket = stream.mark();
    r.stream = &stream;
    const core::transfer_handle handle = next_handle_++;
    transfers_.emplace(handle, r);
    return handle;
  }
  core::transfer_poll poll(core::transfer_handle handle) override {
    record& r = transfers_.at(handle);
    if (r.state == core::transfer_poll::in_flight && r.stream->done(r.ticket)) {
      r.state = core::transfer_poll::succeeded;
      ended_.push_back({handle, r.request, r.state, r.held_by != nullptr ? r.before_page : 0});
    }
    return r.state;
  }
  bool cancel(core::transfer_handle handle) override {
    return poll(handle) != core::transfer_poll::in_flight;
  }
  void hold(core::room_key owner, real::hold_gate& gate, std::uint32_t before_page) override {
    holds_[owner] = {&dynamic_cast<host_gate&>(gate), before_page};
  }
  std::vector<real::held_transfer> held_at(const real::hold_gate& gate) const override {
    std::vector<real::held_transfer> held;
    for (const auto& [handle, r] : transfers_) {
      if (r.held_by == &gate) held.push_back({handle, r.request, r.before_page});
    }
    return held;
  }
  std::vector<real::ended_transfer> take_ended() override {
    std::vector<real::ended_transfer> e;
    e.swap(ended_);
    return e;
  }

 private:
  struct record {
    core::transfer_request request;
    std::uint64_t ticket = 0;
    core::transfer_poll state = core::transfer_poll::in_flight;
    host_gate* held_by = nullptr;
    std::uint32_t before_page = 0;
    host_stream* stream = nullptr;
  };
  host_pages& source_;
  std::map<core::rank_id, host_pages*> destinations_;
  std::vector<host_stream> streams_;
  std::size_t next_stream_ = 0;
  std::map<core::transfer_handle, record> transfers_;
  std::map<core::room_key, std::pair<host_gate*, std::uint32_t>> holds_;
  std::vector<real::ended_transfer> ended_;
  core::transfer_handle next_handle_ = 1;
};

class host_host_pages final : public real::host_page_memory {
 public:
  host_host_pages(std::uint32_t pages, std::uint32_t page_bytes)
      : pages_(pages), page_bytes_(page_bytes), bytes_(std::size_t{pages} * page_bytes, 0) {}
  std::uint32_t pages() const override { return pages_; }
  std::uint32_t page_bytes() const override { return page_bytes_; }
  const std::uint8_t* page(core::page_index page) const override {
    if (page >= pages_) throw std::out_of_range("host page outside the pool");
    return bytes_.data() + std::size_t{page} * page_bytes_;
  }
  std::uint8_t* writable(core::page_index page) {
    return const_cast<std::uint8_t*>(this->page(page));
  }

 private:
  std::uint32_t pages_;
  std::uint32_t page_bytes_;
  std::vector<std::uint8_t> bytes_;
};

class host_storage final : public real::gated_storage {
 public:
  explicit host_storage(host_host_pages& host) : host_(host) {}
  ~host_storage() override { stream_.wait_idle(); }
  core::storage_handle read_pages(core::room_key owner,
                                  const std::vector<core::page_index>& pages) override {
    if (const auto hold = holds_.find(owner); hold != holds_.end()) hold->second->hold(stream_);
    for (std::uint32_t j = 0; j < pages.size(); ++j) {
      const core::page_index page = pages[j];
      stream_.enqueue([this, owner, page, j] {
        const std::lock_guard lock(memory_mutex);
        real::fill_canary_host(host_.writable(page), host_.page_bytes(),
                               {owner.room, owner.generation, j});
      });
    }
    reads_[next_handle_] = stream_.mark();
    return next_handle_++;
  }
  core::storage_poll poll(core::storage_handle handle) override {
    return stream_.done(reads_.at(handle)) ? core::storage_poll::completed
                                           : core::storage_poll::in_flight;
  }
  core::storage_poll wait(core::storage_handle handle) override {
    stream_.wait_for(reads_.at(handle));
    return core::storage_poll::completed;
  }
  void hold(core::room_key owner, real::hold_gate& gate) override {
    holds_[owner] = &dynamic_cast<host_gate&>(gate);
  }
  void wait_idle() override { stream_.wait_idle(); }

 private:
  host_host_pages& host_;
  host_stream stream_;
  std::map<core::storage_handle, std::uint64_t> reads_;
  std::map<core::room_key, host_gate*> holds_;
  core::storage_handle next_handle_ = 1;
};

class host_group final : public real::group_plane {
 public:
  bool across_devices() const override { return false; }
  std::int64_t reduce(std::uint32_t, std::int64_t, core::reduce_op,
                      const real::wait_policy&) override {
    throw std::logic_error("host groups combine on the host");
  }
  std::int64_t pass_through(std::int64_t value, core::reduce_op,
                            const real::wait_policy&) override {
    return value;
  }
};

}  // namespace

std::unique_ptr<real::page_memory> host_data_plane::make_pages(std::uint32_t, std::uint32_t pages,
                                                               std::uint32_t page_bytes) {
  return std::make_unique<host_pages>(pages, page_bytes);
}

std::unique_ptr<real::hold_gate> host_data_plane::make_gate() {
  return std::make_unique<host_gate>();
}

std::unique_ptr<real::gated_transfer_engine> host_data_plane::make_transfer_engine(
    core::rank_id, real::page_memory& source,
    const std::map<core::rank_id, real::page_memory*>& destinations) {
  std::map<core::rank_id, host_pages*> pools;
  for (const auto& [rank, memory] : destinations) pools[rank] = &dynamic_cast<host_pages&>(*memory);
  return std::make_unique<host_engine>(dynamic_cast<host_pages&>(source), std::move(pools));
}

std::unique_ptr<real::host_page_memory> host_data_plane::make_host_pages(std::uint32_t,
                                                                         std::uint32_t pages,
                                                                         std::uint32_t page_bytes) {
  return std::make_unique<host_host_pages>(pages, page_bytes);
}

std::unique_ptr<real::gated_storage> host_data_plane::make_storage(std::uint32_t, core::rank_id,
                                                                   real::host_page_memory& host) {
  return std::make_unique<host_storage>(dynamic_cast<host_host_pages&>(host));
}

std::unique_ptr<real::group_plane> host_data_plane::make_group_plane(std::uint32_t) {
  return std::make_unique<host_group>();
}

}  // namespace kvsim::testing
