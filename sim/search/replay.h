#pragma once
// Replay of a recorded decision list. Strict: the first decision that does not fit (another
// kind, another number of options, a chosen subject that is not offered, more or fewer
// decisions than recorded) stops the run with a divergence report. Lenient: replay the
// prefix that fits, then hand every later decision to a fallback strategy.
#include <memory>
#include <vector>

#include "sim/search/strategy.h"

namespace kvsim::sim {

enum class replay_mode : std::uint8_t { strict, lenient };

class replay final : public strategy {
 public:
  replay(std::vector<decision> recorded, replay_mode mode,
         std::unique_ptr<strategy> fallback = nullptr);
  std::string name() const override;
  std::uint32_t choose(const decision_request& request) override;
  void on_run_end(std::uint64_t decisions_taken) override;

  // How many recorded decisions were replayed before the fallback took over (lenient).
  std::uint64_t replayed() const { return replayed_; }

 private:
  std::uint32_t diverge(const decision_request& request, std::string expected);

  std::vector<decision> recorded_;
  replay_mode mode_;
  std::unique_ptr<strategy> fallback_;
  std::uint64_t next_ = 0;
  std::uint64_t replayed_ = 0;
  bool on_fallback_ = false;
};

std::string describe(const decision& d);
std::string describe(const decision_request& request);

}  // namespace kvsim::sim
