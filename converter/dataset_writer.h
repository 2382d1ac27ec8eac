// DatasetWriter: shards written from records the caller produces one at a
// time (the Python writer: a pandas table, a Hugging Face dataset, a Spark
// partition), through the same shard writer as `convert`: size-bounded
// shards with index files under hidden temporary names, renamed by Close(),
// then manifest.json last. Records go out in the order given or, with
// shuffle_window > 0, shuffled within a window of that many records (seeded:
// the same input and seed give the same shards).
//
// With task_count > 0 the writer is one task of a distributed job (e.g. one
// Spark partition): it writes DIR/_parts/task-I-of-N/ and its part file
// (converter/task_part.h) instead of a manifest, and `merge` makes one
// dataset of all tasks, numbering the shards in task order.
//
// An s3:// or gs:// output_dir is staged in a local folder and uploaded by
// Close(), the manifest last (converter/bucket_output.h); tasks of a
// distributed job write to a shared folder instead (UNIMPLEMENTED).
//
// Destroying a writer without Close() (an error, an exception) removes its
// temporaries: nothing that looks complete is left. Not thread-safe.
#ifndef SHARDFEED_CONVERTER_DATASET_WRITER_H_
#define SHARDFEED_CONVERTER_DATASET_WRITER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/bucket_output.h"
#include "converter/shard_writer.h"
#include "proto/manifest.pb.h"
#include "record/compression.h"

namespace shardfeed {

struct DatasetWriterOptions {
  std::string output_dir;
  std::string prefix = "train";  // shard names PREFIX-NNNNN-of-NNNNN.tfrecord
  std::string split = "train";   // the split in the manifest
  uint64_t shard_size = 100'000'000;  // uncompressed bytes, as convert
  Compression compression = Compression::kNone;
  int compression_level = -1;
  bool overwrite = false;  // replace a dataset shardfeed wrote there
  uint64_t shuffle_window = 0;  // 0: the order given
  uint64_t seed = 0;
  int task_index = 0;
  int task_count = 0;  // > 0: write a task part for `merge`
  std::string source = "python";  // the manifest's source_type
};

class DatasetWriter {
 public:
  static absl::StatusOr<std::unique_ptr<DatasetWriter>> Create(const DatasetWriterOptions& o);
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  // `record` as ExampleEncoder::FinishUnframed() returns it (room for the
  // header in front); framed (CRCs) and written here.
  absl::Status Write(std::string record);

  // Writes what the shuffle window holds, renames the shards, writes the
  // manifest (or the task part) with `features` as its schema. Returns it.
  // FAILED_PRECONDITION after an earlier Close(). A bucket output is
  // uploaded here; `cancelled` (may be empty) is polled before each file
  // and part, and true stops the upload with CANCELLED (no manifest).
  absl::StatusOr<Manifest> Close(const std::vector<FeatureSchema>& features,
                                 const std::function<bool()>& cancelled = nullptr);

  uint64_t records() const { return records_; }

 private:
  explicit DatasetWriter(const DatasetWriterOptions& o);
  absl::Status Emit(const std::string& framed);

  DatasetWriterOptions o_;
  std::string folder_;  // where shards go: the output, or the task's part folder
  PendingShards shards_;
  std::unique_ptr<ShardSequenceWriter> writer_;
  std::vector<std::string> window_;
  std::mt19937_64 rng_;
  uint64_t records_ = 0;
  uint64_t bytes_ = 0;
  std::vector<std::string> previous_;  // files of a dataset this one replaces
  std::optional<BucketOutput> bucket_;  // an s3:// or gs:// output
  std::optional<StagingFolder> staging_;  // where its files are written first
  bool closed_ = false;
};

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_DATASET_WRITER_H_
