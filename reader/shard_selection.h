// The one way every command names shards: SelectShards() turns what the user
// gave (manifest.json, a folder holding one, a folder of shards, a quoted
// glob, shard paths; reader/shard_discovery.h) and an optional split into
// the ordered list of shard files to read. `bench`, `cat`, `copy`, `index`
// and the Loader (Dataset::Open) all go through it, so a name that one
// command accepts, every command accepts. Extend it here (e.g. for remote
// paths), not in the commands.
//
// Splits: with `split`, a manifest's shards of that split, or without a
// manifest the shards named "SPLIT-*" (none is an error). Without `split`,
// under SplitDefault::kTrain a dataset holding several splits (a manifest
// given whole, or a folder of NAME-NNNNN-of-NNNNN shards) reads "train" and
// says so in `notes` (no "train": INVALID_ARGUMENT asking for a split);
// under kAll every split is taken. Shards the user named one by one or by a
// glob are taken as given, in the order given (a folder's or a glob's in
// name order), each once.
//
// Errors: NOT_FOUND for a path that does not exist or a glob that matches
// nothing; INVALID_ARGUMENT for no shards, two manifests, an unknown split;
// DATA_LOSS for a manifest that does not parse. Reads the file system only
// (no shard is opened). Thread-compatible.
#ifndef SHARDFEED_READER_SHARD_SELECTION_H_
#define SHARDFEED_READER_SHARD_SELECTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

enum class SplitDefault {
  kTrain,  // readers: one split, "train" when there are several
  kAll,    // tools that treat every shard (index): all splits
};

struct SelectedShard {
  std::string path;
  int64_t records = -1;  // the manifest's count; -1 when no manifest lists it
};

struct ShardSelection {
  std::vector<SelectedShard> shards;
  std::optional<Manifest> manifest;  // the dataset's, when one was given or found
  std::string split;                 // the split selected ("" when none was)
  std::vector<std::string> notes;    // what the user should be told, one line each
};

absl::StatusOr<ShardSelection> SelectShards(const std::vector<std::string>& paths,
                                            const std::string& split = "",
                                            SplitDefault split_default = SplitDefault::kTrain);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_SHARD_SELECTION_H_
