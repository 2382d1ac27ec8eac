// Merge: makes one dataset of the parts that the tasks of a distributed
// conversion wrote into DIR/_parts/ (`shardfeed convert --task-index I
// --task-count N`, or the Python writer with task_index/task_count, e.g.
// one task per Spark partition).
//
// Merge first verifies everything, changing nothing: every task 0..N-1 has
// committed its part; all parts come from the same run (same task count,
// options and, for convert tasks, the same plan); every shard has the size
// and whole-file CRC32C its task recorded and an index with its record
// count. Any problem: DATA_LOSS listing each problem with its task (one per
// line), and nothing is written or moved. Then it moves the shards to their
// final names in DIR (convert tasks: the names the single-process run
// gives; writer parts: numbered in task order), writes DIR/manifest.json
// last and removes DIR/_parts. A merge interrupted while moving can be run
// again.
//
// With MergeOptions::output (s3://BUCKET/PREFIX or gs://...), the verified
// shards are uploaded instead under their final names, with their indexes,
// and the manifest last (converter/bucket_output.h: an existing dataset
// there is refused without `overwrite`); DIR and its parts stay as they
// are. Not thread-safe with respect to other merges of the same DIR.
#ifndef SHARDFEED_CONVERTER_MERGE_H_
#define SHARDFEED_CONVERTER_MERGE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

struct MergeOptions {
  int threads = 0;  // verifying shards; 0: one per core
  // "": the dataset is made in DIR. An s3:// or gs:// prefix: it is
  // uploaded there (see above).
  std::string output;
  bool overwrite = false;  // replace a dataset shardfeed wrote at `output`
  // With `output`: called after each file uploaded, with its size, from
  // upload threads. May be empty.
  std::function<void(uint64_t bytes)> uploaded;
};

struct MergeSummary {
  Manifest manifest;  // as written to DIR/manifest.json
  int tasks = 0;
  double seconds = 0;
};

absl::StatusOr<MergeSummary> Merge(const std::string& dir, const MergeOptions& options = {});

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_MERGE_H_
