// Tiny helpers shared by the end-to-end benchmarks: a monotonic clock and a
// best-of-N timer. Benchmarks compare against a baseline in the same run and
// report ratios (see BENCHMARKS.md).
#ifndef SHARDFEED_BENCH_TIMING_H_
#define SHARDFEED_BENCH_TIMING_H_

#include <algorithm>
#include <chrono>
#include <functional>

namespace shardfeed::bench {

inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs fn `repeats` times and returns the fastest wall time in seconds.
inline double BestOf(int repeats, const std::function<void()>& fn) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    double t0 = NowSeconds();
    fn();
    best = std::min(best, NowSeconds() - t0);
  }
  return best;
}

}  // namespace shardfeed::bench

#endif  // SHARDFEED_BENCH_TIMING_H_
