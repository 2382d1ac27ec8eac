// RecordStream: one rank's records of one epoch, in the streaming path's
// deterministic order: its part of the epoch (PlanEpoch) read by I/O threads
// (sequential reads, data CRC verified), through a seeded shuffle buffer.
// Records are copied into their own buffers, so the buffer holds about
// shuffle_buffer x record size. Used by one thread (the producer); the I/O
// threads stop when the stream is destroyed or Cancel() is called. If an
// I/O thread cannot be created, Next() returns RESOURCE_EXHAUSTED.
#ifndef SHARDFEED_READER_RECORD_STREAM_H_
#define SHARDFEED_READER_RECORD_STREAM_H_

#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "reader/bounded_queue.h"
#include "reader/epoch_plan.h"
#include "reader/loader_backend.h"
#include "reader/loader_options.h"

namespace shardfeed {

struct StreamedRecord {
  std::string bytes;
  size_t shard = 0;
  uint64_t offset = 0;   // in the shard
  int64_t ordinal = 0;   // record number in the shard
};

struct StreamCounters {
  std::atomic<int64_t> bytes{0};
  StageTimer read, crc;
};

class RecordStream {
 public:
  RecordStream(const Dataset* ds, const ResolvedOptions* r, int64_t epoch,
               StreamCounters* counters);
  ~RecordStream();
  void Cancel();
  // The next record: true, or false at the end of the epoch.
  absl::StatusOr<bool> Next(StreamedRecord* out);
  // Records skipped (skip_corrupt) since the last call.
  int64_t TakeSkipped();

 private:
  struct Chunk;
  using ChunkPtr = std::shared_ptr<Chunk>;
  void ReadItems(int thread);
  bool ReadItem(const WorkItem& item, BoundedQueue<ChunkPtr>* queue);
  absl::StatusOr<bool> NextInOrder(StreamedRecord* out);

  const Dataset* ds_;
  const ResolvedOptions* r_;
  StreamCounters* counters_;
  std::atomic<bool> stop_{false};
  std::vector<WorkItem> items_;
  std::vector<std::unique_ptr<BoundedQueue<ChunkPtr>>> queues_;
  std::vector<std::thread> threads_;
  absl::Status start_error_;  // an I/O thread could not start
  std::mt19937_64 rng_;
  std::vector<StreamedRecord> buffer_;
  bool input_done_ = false;
  size_t item_ = 0;
  ChunkPtr chunk_;
  size_t pos_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_RECORD_STREAM_H_
