#include "converter/index_in_place.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/version.h"
#include "converter/convert.h"
#include "converter/tfrecord_scan.h"
#include "reader/shard_discovery.h"
#include "record/file.h"
#include "record/shard_name.h"
#include "record/status_macros.h"

namespace shardfeed {

absl::StatusOr<Manifest> IndexInPlace(const std::vector<std::string>& inputs, bool overwrite) {
  ASSIGN_OR_RETURN(ScannedDataset scan, ScanTfRecordDataset(inputs));
  const std::string dir = DirName(scan.shards.front().path);
  for (const ScannedShard& s : scan.shards) {
    if (DirName(s.path) != dir) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the shards are in more than one folder (", dir, ", ", DirName(s.path),
          "): a manifest lists the shards of its own folder"));
    }
  }
  const std::string manifest_path = JoinPath(dir, kManifestName);
  if (!overwrite && PathExists(manifest_path)) {
    return absl::AlreadyExistsError(
        absl::StrCat(manifest_path, " exists; use --overwrite to replace it"));
  }
  Manifest m;
  m.set_format_version(1);
  m.set_tool("shardfeed");
  m.set_tool_version(kVersion);
  m.set_source_type("tfrecord");
  m.set_source(absl::StrJoin(inputs, " "));
  for (const FeatureSchema& f : scan.Schema()) *m.add_features() = f;
  std::map<std::string, std::pair<int64_t, int64_t>> per_split;  // records, shards
  for (const ScannedShard& s : scan.shards) {
    RETURN_IF_ERROR(WriteIndexFile(IndexPathFor(s.path), s.index));
    ASSIGN_OR_RETURN(uint32_t crc, FileCrc32c(s.path));
    ShardInfo* info = m.add_shards();
    info->set_file(std::string(BaseName(s.path)));
    info->set_split(s.split);
    info->set_records(static_cast<int64_t>(s.index.size()));
    info->set_bytes(static_cast<int64_t>(s.bytes));
    info->set_crc32c(absl::StrFormat("%08x", crc));
    info->set_index_file(absl::StrCat(info->file(), ".index"));
    per_split[s.split].first += info->records();
    per_split[s.split].second += 1;
    m.set_total_records(m.total_records() + info->records());
    m.set_total_bytes(m.total_bytes() + info->bytes());
  }
  for (const std::string& split : scan.splits) {
    SplitInfo* info = m.add_splits();
    info->set_name(split);
    info->set_records(per_split[split].first);
    info->set_shards(per_split[split].second);
  }
  RETURN_IF_ERROR(WriteFileAtomically(manifest_path, ManifestToJson(m)));
  return m;
}

}  // namespace shardfeed
