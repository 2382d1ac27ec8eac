// Dataset: the shards a Loader reads, with their record counts.
//
// From a manifest.json (or a folder holding one): its shards and counts, and
// its schema as the default feature spec. From a glob, a folder of shards or
// a list of paths: counts come from each shard's .index file, or (if absent)
// from one counting pass that verifies every CRC.
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
  int64_t total_records() const;

  // `paths`: one manifest.json, a folder, a glob, or shard paths. `split`
  // (e.g. "train") keeps only that split's shards of a manifest; "" keeps all.
  static absl::StatusOr<Dataset> Open(const std::vector<std::string>& paths,
                                      const std::string& split = "");
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DATASET_H_
