// Writing sequences of shards, shared by `convert`, its tasks, the Python
// writer and `merge`:
//  - ShardBoundaryRule: where each shard of a sequence starts, from the framed
//    record sizes alone (so a task that knows the sizes computes the same
//    boundaries as the single process that writes the records);
//  - ShardSequenceWriter: writes one prefix's shards under hidden temporary
//    names (converter/leftovers.h: DIR/.PREFIX-NNNNN.partial-PID and its
//    .index), closing each shard where the rule says; its errors name the
//    folder and shard, not the hidden file;
//  - PendingShards: owns the finished temporaries; Finalize() gives them their
//    final names ("PREFIX-SSSSS-of-NNNNN.tfrecord" and ".index"); temporaries
//    never finalized are removed by the destructor (error, exception, cancel).
//
// Not thread-safe: one thread drives a writer (records may be framed on
// other threads). Errors are absl::Status naming the file.
#ifndef SHARDFEED_CONVERTER_SHARD_WRITER_H_
#define SHARDFEED_CONVERTER_SHARD_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/manifest.pb.h"
#include "record/compression.h"
#include "record/file.h"
#include "record/record_writer.h"

namespace shardfeed {

class ShardBoundaryRule {
 public:
  // num_shards > 0: that many shards over `records` records (split evenly by
  // count; shard_size ignored; one record each if there are fewer records). Otherwise a shard ends before the
  // record that would take it past `shard_size` bytes (a shard exceeds it only
  // by a single record larger than the target).
  ShardBoundaryRule(uint64_t shard_size, int64_t num_shards, uint64_t records)
      : shard_size_(shard_size),
        num_shards_(num_shards > 0 && static_cast<uint64_t>(num_shards) > records
                        ? static_cast<int64_t>(records)  // never an empty shard
                        : num_shards),
        records_(records) {}

  // Called once per record, in order: true if the record starts a new shard
  // (always for the first).
  bool StartsShard(uint64_t framed_size);
  int64_t shards() const { return shards_; }

 private:
  uint64_t shard_size_;
  int64_t num_shards_;
  uint64_t records_;
  uint64_t in_shard_ = 0;  // bytes in the current shard
  uint64_t seen_ = 0;
  int64_t shards_ = 0;
  uint64_t next_boundary_ = 0;
};

struct FinishedShard {
  std::string temp_path;   // complete shard under a hidden name
  std::string temp_index;  // its index file under a hidden name
  std::string prefix;
  std::string name;        // the final name if already known, else numbered by Finalize
  uint64_t data_bytes = 0;  // framed records, uncompressed
  ShardInfo info;          // split, records, bytes, crc32c; file names once finalized
};

// "PREFIX-00003-of-00010.tfrecord[.gz|.zlib]".
std::string ShardName(absl::string_view prefix, int64_t k, int64_t count, Compression c);

class PendingShards {
 public:
  PendingShards() = default;
  ~PendingShards();  // removes every temporary not finalized
  PendingShards(const PendingShards&) = delete;
  PendingShards& operator=(const PendingShards&) = delete;

  void Add(FinishedShard s) { shards_.push_back(std::move(s)); }
  const std::vector<FinishedShard>& shards() const { return shards_; }
  FinishedShard& back() { return shards_.back(); }

  // Renames every shard (and index) into `dir` under its final name (its
  // `name`, or numbered per prefix in the order added), and appends it to `manifest` (shards,
  // total_records, total_bytes).
  absl::Status Finalize(const std::string& dir, Compression c, Manifest* manifest);

 private:
  std::vector<FinishedShard> shards_;
};

struct ShardSequenceOptions {
  std::string dir;     // where the temporaries go
  std::string prefix;  // shard name prefix
  std::string split;   // for ShardInfo
  Compression compression = Compression::kNone;
  int compression_level = -1;
  int64_t first_shard = 0;  // the number of the first shard (in temporary names)
};

class ShardSequenceWriter {
 public:
  // `rule` decides the boundaries; finished shards go to `done`, which must
  // outlive the writer.
  ShardSequenceWriter(ShardSequenceOptions o, ShardBoundaryRule rule, PendingShards* done)
      : o_(std::move(o)), rule_(rule), done_(done), shard_count_(o_.first_shard) {}

  // `framed` is a whole record (header, data, footer).
  absl::Status Add(absl::string_view framed);
  // Closes the last shard.
  absl::Status Finish();

 private:
  absl::Status CloseShard();
  absl::Status InUserTerms(const absl::Status& s) const;

  ShardSequenceOptions o_;
  std::string partial_, shown_;  // the shard being written, as hidden and as shown
  ShardBoundaryRule rule_;
  PendingShards* done_;
  std::unique_ptr<RecordWriter> writer_;
  int64_t shard_count_ = 0;
};

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_SHARD_WRITER_H_
