#include "converter/tfrecord_scan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "record/crc32c.h"
#include "record/file.h"
#include "reader/shard_discovery.h"
#include "record/record_reader.h"
#include "record/shard_name.h"
#include "record/input_stream.h"
#include "record/status_macros.h"
#include "record/storage.h"

namespace shardfeed {
namespace {

absl::Status ScanShard(const RecordVisitor& visit, ScannedShard* shard, ScannedDataset* out) {
  ASSIGN_OR_RETURN(auto reader, RecordReader::Open(shard->path));
  shard->bytes = reader->file_size();
  shard->compression = reader->compression();
  absl::string_view record;
  for (;;) {
    absl::Status s = reader->ReadRecord(&record);
    if (absl::IsOutOfRange(s)) break;
    RETURN_IF_ERROR(s);
    const uint64_t offset = reader->last_record_offset();
    shard->index.push_back({offset, reader->offset() - offset});
    if (!out->inference.Add(record, static_cast<int64_t>(offset)).ok()) ++out->non_examples;
    if (visit) RETURN_IF_ERROR(visit(*shard, record, offset));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<FeatureSchema> ScannedDataset::Schema() const {
  return manifest_features.empty() ? inference.Schema() : manifest_features;
}

absl::StatusOr<ScannedDataset> ScanTfRecordDataset(const std::vector<std::string>& inputs,
                                                   const RecordVisitor& visit) {
  ASSIGN_OR_RETURN(ShardInputs in, FindShards(inputs));
  ScannedDataset out;
  for (const ManifestInput& m : in.manifests) {
    RETURN_IF_ERROR(m.parsed);
    if (out.manifest_features.empty()) {
      out.manifest_features.assign(m.manifest.features().begin(), m.manifest.features().end());
    }
    for (int i : m.shards()) {
      const ShardInfo& info = m.manifest.shards(i);
      out.shards.push_back({m.ShardPath(info), info.split().empty() ? "train" : info.split()});
    }
  }
  for (const LooseShard& s : in.loose) {
    std::string split = TfShardPrefix(BaseName(s.path));
    out.shards.push_back({s.path, split.empty() ? "train" : split});
  }
  if (out.shards.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(absl::StrJoin(inputs, " "), ": no shards"));
  }
  std::sort(out.shards.begin(), out.shards.end(),
            [](const ScannedShard& a, const ScannedShard& b) { return a.path < b.path; });
  for (size_t i = 0; i < out.shards.size(); ++i) {
    RETURN_IF_ERROR(ScanShard(visit, &out.shards[i], &out));
    const std::string& split = out.shards[i].split;
    if (std::find(out.splits.begin(), out.splits.end(), split) == out.splits.end()) {
      out.splits.push_back(split);
    }
  }
  std::sort(out.splits.begin(), out.splits.end(), [](const std::string& a, const std::string& b) {
    return std::make_pair(a != "train", a) < std::make_pair(b != "train", b);
  });
  return out;
}

absl::StatusOr<uint32_t> FileCrc32c(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessSource> file, OpenSource(path));
  // Large reads: a remote object is read in few requests.
  std::string buf(file->local_path().empty() ? kRemoteBlockSize : 1 << 20, '\0');
  uint32_t crc = 0;
  for (uint64_t at = 0;;) {
    ASSIGN_OR_RETURN(size_t n, file->ReadAt(at, buf.data(), buf.size()));
    if (n == 0) break;
    crc = crc32c::Extend(crc, buf.data(), n);
    at += n;
  }
  return crc;
}

}  // namespace shardfeed
