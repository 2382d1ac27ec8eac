// Scans an existing TFRecord dataset (TensorFlow's or anyone's): every record
// of every shard, any compression, CRCs verified, the schema inferred from
// all records (reader/schema_inference.h). Used by `shardfeed convert
// tfrecord` (resharding) and `shardfeed index --manifest` (index files and a
// manifest beside the shards, nothing copied).
//
// The inputs are resolved as reader/shard_discovery.h says (folder, glob,
// manifest.json, shard paths). Each shard's split: its manifest's when one
// lists it, else the NAME of TensorFlow's NAME-NNNNN-of-NNNNN, else "train".
// Errors: the reader's (DATA_LOSS "FILE:OFFSET: ..." for a damaged shard),
// usage errors from discovery. Runs on the calling thread.
#ifndef SHARDFEED_CONVERTER_TFRECORD_SCAN_H_
#define SHARDFEED_CONVERTER_TFRECORD_SCAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/manifest.pb.h"
#include "reader/schema_inference.h"
#include "record/compression.h"
#include "record/index.h"

namespace shardfeed {

struct ScannedShard {
  std::string path;
  std::string split;
  Compression compression = Compression::kNone;
  uint64_t bytes = 0;              // on disk
  std::vector<IndexEntry> index;   // offsets in the (decompressed) stream
};

struct ScannedDataset {
  std::vector<ScannedShard> shards;  // sorted by path
  std::vector<std::string> splits;   // distinct, "train" first, then by name
  SchemaInference inference;
  int64_t non_examples = 0;          // records that are not Examples
  // The input manifest's schema, when the shards came with one (else empty:
  // use inference.Schema()).
  std::vector<FeatureSchema> manifest_features;
  // The schema to write: the manifest's, else the inferred one.
  std::vector<FeatureSchema> Schema() const;
};

// Called for every record, in order: its shard (path, compression known),
// the record's data and its offset in the (decompressed) stream.
using RecordVisitor = std::function<absl::Status(const ScannedShard& shard,
                                                 absl::string_view record, uint64_t offset)>;

absl::StatusOr<ScannedDataset> ScanTfRecordDataset(const std::vector<std::string>& inputs,
                                                   const RecordVisitor& visit = nullptr);

// CRC32C of a whole file's bytes (the manifest's per-shard checksum).
absl::StatusOr<uint32_t> FileCrc32c(const std::string& path);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_TFRECORD_SCAN_H_
