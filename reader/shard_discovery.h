// Shard discovery: what the paths a user gives (`check`, `bench`, `Loader`)
// stand for.
//
//  - a manifest.json, or a folder holding one: that dataset, whole;
//  - a folder without a manifest: its shards (record/shard_name.h: names
//    with ".tfrecord" or TensorFlow's NAME-NNNNN-of-NNNNN, any extension);
//  - a glob: each match taken for what it is (a manifest.json is the
//    dataset, an .index file is not a shard and is skipped, anything else is
//    a shard);
//  - a shard path: a shard; when the manifest.json beside it lists it, it is
//    read as that dataset's shard (schema, counts) without the others.
//
// Usage errors (a path that does not exist, a folder without shards) are
// NOT_FOUND / INVALID_ARGUMENT; a manifest that does not parse is reported in
// ManifestInput::parsed, not as an error (check reports it as a problem).
// Thread-compatible; reads the file system only.
#ifndef SHARDFEED_READER_SHARD_DISCOVERY_H_
#define SHARDFEED_READER_SHARD_DISCOVERY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"
#include "record/shard_name.h"  // JoinPath

namespace shardfeed {

struct ManifestInput {
  std::string path;     // ".../manifest.json"
  absl::Status parsed;  // DATA_LOSS "PATH: not a valid manifest (...)" if not
  Manifest manifest;
  // True: the dataset was given (its manifest or folder). False: only some
  // of its shards were, by path: `selected` (indices into
  // manifest.shards(), each once, in the order given).
  bool whole = false;
  std::vector<int> selected;

  // The shards to read: every listed one when whole (in the manifest's
  // order), else the selected ones (indices into manifest.shards()).
  std::vector<int> shards() const;
  // Where a listed shard is ("dir/file", or "file" beside a bare manifest).
  std::string ShardPath(const ShardInfo& info) const;
};

struct LooseShard {
  std::string path;
  // Found by listing a folder (not named by the user, one by one or by a
  // glob).
  bool listed = false;
};

struct ShardInputs {
  std::vector<ManifestInput> manifests;  // in the order given
  // Shards no manifest lists, each once, in the order given (a folder's or
  // a glob's in name order).
  std::vector<LooseShard> loose;
  // Matches left out, with why ("x.index: an index file, not a shard").
  std::vector<std::string> skipped;
};

absl::StatusOr<ShardInputs> FindShards(const std::vector<std::string>& paths);

// Reads and parses a manifest.json (unknown fields ignored). I/O errors are
// returned; a parse error is DATA_LOSS "PATH: not a valid manifest (what
// protobuf says)", on one line.
absl::StatusOr<Manifest> ReadManifest(const std::string& path);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_SHARD_DISCOVERY_H_
