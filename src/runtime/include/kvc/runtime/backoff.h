#pragma once
// Backoff and jitter (k8s.io/apimachinery/pkg/util/wait): the one place randomness enters the
// runtime (STYLE.md §6.9). Tests inject a RandomSource that returns fixed values.

#include <functional>

#include "kvc/common/clock.h"

namespace kvc::runtime {

// Uniform in [0, 1).
using RandomSource = std::function<double()>;

// The process-wide source (a mutex-guarded mt19937_64 seeded from std::random_device).
RandomSource defaultRandom();

// wait.Jitter: `d` plus up to `max_factor * d` (max_factor <= 0 means 1.0).
Clock::Duration jitter(Clock::Duration d, double max_factor, const RandomSource& random);

// Exponential backoff: initial, initial*factor, ... capped at max, each jittered by up to
// `jitter_factor` of itself.
class Backoff {
public:
  Backoff(Clock::Duration initial, Clock::Duration max, double factor = 2.0,
          double jitter_factor = 0.0, RandomSource random = defaultRandom());

  // The next wait; the one after it is longer.
  Clock::Duration next();
  void reset() { current_ = initial_; }

private:
  Clock::Duration initial_;
  Clock::Duration max_;
  double factor_;
  double jitter_factor_;
  RandomSource random_;
  Clock::Duration current_;
};

}  // namespace kvc::runtime
