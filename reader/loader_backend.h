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
  std::vector<std::string> notes;  // ResolvedOptions::notes
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

// The counters behind LoaderStats that the filling paths share.
struct PipelineCounters {
  std::atomic<int64_t> bytes{0}, skipped{0};
  StageTimer read, crc, decode, copy, wait, transform;
  // Consumer thread only.
  int64_t batches = 0, records = 0, ready_samples = 0, next_calls = 0;
  double start = NowSeconds();

  LoaderStats ToStats() const {
    LoaderStats s;
    s.batches = batches;
    s.records = records;
    s.bytes = bytes.load();
    s.skipped_records = skipped.load();
    s.wall_seconds = NowSeconds() - start;
    s.read_seconds = read.seconds();
    s.crc_seconds = crc.seconds();
    s.decode_seconds = decode.seconds();
    s.copy_seconds = copy.seconds();
    s.wait_seconds = wait.seconds();
    s.transform_seconds = transform.seconds();
    s.mean_ready_slots = next_calls ? static_cast<double>(ready_samples) / next_calls : 0;
    return s;
  }
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_LOADER_BACKEND_H_
