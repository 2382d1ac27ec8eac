// Loader::Backend: the interface each reading path implements (planned,
// streaming, resident), and the timers they share. Internal to the reader.
// Threading: as Loader (Next/stats/state from one thread).
#ifndef SHARDFEED_READER_LOADER_BACKEND_H_
#define SHARDFEED_READER_LOADER_BACKEND_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "reader/loader.h"

namespace shardfeed {

class Loader::Backend {
 public:
  virtual ~Backend() = default;
  virtual absl::StatusOr<Batch> Next(absl::Duration timeout) = 0;
  virtual LoaderStats stats() const = 0;
  virtual const std::vector<FeatureSpec>& features() const = 0;
  virtual int64_t batches_per_epoch() const = 0;
  virtual int device() const = 0;
  virtual const std::string& device_note() const = 0;
  virtual LoaderState state() const = 0;
  std::string cache_note;
  std::string path_note;
};

// Seconds on a monotonic clock.
inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A time accumulator shared by threads.
struct StageTimer {
  std::atomic<int64_t> ns{0};
  void Add(double seconds) { ns.fetch_add(static_cast<int64_t>(seconds * 1e9)); }
  double seconds() const { return ns.load() / 1e9; }
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_LOADER_BACKEND_H_
