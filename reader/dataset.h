// Dataset: the shards a Loader reads, with their record counts.
//
// Paths and splits are resolved by SelectShards (reader/shard_selection.h),
// as for every command, and as reader/shard_discovery.h says: a manifest.json or a
// folder holding one is that dataset; a folder without one, its shards
// (".tfrecord" names or TensorFlow's NAME-NNNNN-of-NNNNN, with or without an
// extension); a glob, its matches taken for what they are (.index files are
// skipped, a manifest.json is the dataset); a shard with a manifest.json
// beside it that lists it is read with that manifest's schema and counts.
// Counts come from the manifest, else from each shard's .index file, else
// from one counting pass that verifies every CRC.
//
// Splits. With `split` given: a manifest's shards of that split; without a
// manifest, the shards whose names start with "SPLIT-" (TensorFlow's
// "train-00000-of-01024"); no such shard is an error, never ignored.
// Without `split`, when the dataset (a manifest given whole, or a folder of
// NAME-NNNNN-of-NNNNN shards) holds several splits: "train" is read when it
// is one of them, and `notes` says so; otherwise INVALID_ARGUMENT asks for a
// split. Shards named by the user (one by one, or by a glob) are read as
// given.
#ifndef SHARDFEED_READER_DATASET_H_
#define SHARDFEED_READER_DATASET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"
#include "record/index.h"

namespace shardfeed {

struct ShardEntry {
  std::string path;
  int64_t records = 0;
  // Record offsets, when an index file exists (lets readers seek).
  std::vector<IndexEntry> index;
};

struct Dataset {
  std::vector<ShardEntry> shards;
  std::optional<Manifest> manifest;
  // The split read ("" when the shards were not selected by split).
  std::string split;
  // What the user should be told (e.g. the split chosen by default); one
  // line each, for stderr or a Python warning.
  std::vector<std::string> notes;
  int64_t total_records() const;

  // `paths`: manifests, folders, globs or shard paths (see above). `split`
  // (e.g. "train"): only that split; "": see "Splits" above.
  static absl::StatusOr<Dataset> Open(const std::vector<std::string>& paths,
                                      const std::string& split = "");
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DATASET_H_
