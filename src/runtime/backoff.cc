#include "kvc/runtime/backoff.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <random>

namespace kvc::runtime {

RandomSource defaultRandom() {
  struct Shared {
    std::mutex mutex;
    std::mt19937_64 engine{std::random_device{}()};
  };
  static auto shared = std::make_shared<Shared>();
  return [s = shared] {
    std::lock_guard<std::mutex> guard(s->mutex);
    return std::uniform_real_distribution<double>(0.0, 1.0)(s->engine);
  };
}

Clock::Duration jitter(Clock::Duration d, double max_factor, const RandomSource& random) {
  if (max_factor <= 0.0) {
    max_factor = 1.0;
  }
  const double extra = random() * max_factor * static_cast<double>(d.count());
  return d + Clock::Duration(static_cast<Clock::Duration::rep>(extra));
}

Backoff::Backoff(Clock::Duration initial, Clock::Duration max, double factor, double jitter_factor,
                 RandomSource random)
    : initial_(initial),
      max_(max),
      factor_(factor),
      jitter_factor_(jitter_factor),
      random_(std::move(random)),
      current_(initial) {}

Clock::Duration Backoff::next() {
  Clock::Duration wait = current_;
  const double grown = static_cast<double>(current_.count()) * factor_;
  current_ = grown >= static_cast<double>(max_.count())
                 ? max_
                 : Clock::Duration(static_cast<Clock::Duration::rep>(grown));
  if (jitter_factor_ > 0.0) {
    wait = jitter(wait, jitter_factor_, random_);
  }
  return std::min(wait, max_ + Clock::Duration(static_cast<Clock::Duration::rep>(
                                   static_cast<double>(max_.count()) * jitter_factor_)));
}

}  // namespace kvc::runtime
