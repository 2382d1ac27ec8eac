#include "check/salvage_manifest.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "converter/convert.h"
#include "converter/tfrecord_scan.h"
#include "record/file.h"
#include "record/index.h"
#include "record/shard_name.h"
#include "record/status_macros.h"

namespace shardfeed {

absl::StatusOr<std::string> WriteSalvageManifest(const CheckInputs& in,
                                                 const std::vector<ShardResult>& shards,
                                                 const std::string& salvage_dir, bool overwrite) {
  const Manifest* source = nullptr;
  std::string source_path;
  Manifest m;
  for (const ShardResult& s : shards) {
    if (!s.salvaged) continue;
    auto it = in.listed.find(s.path);
    if (it == in.listed.end()) continue;
    const auto& [path, manifest] = in.manifests[it->second.second];
    if (source == nullptr) {
      source = &manifest;
      source_path = path;
      m = manifest;
      m.clear_shards();
      m.clear_splits();
      m.set_total_records(0);
      m.set_total_bytes(0);
    } else if (source != &manifest) {
      return absl::InvalidArgumentError(absl::StrCat(
          "salvaged shards of two datasets (", source_path, ", ", path, ") into ", salvage_dir,
          ": no manifest written; salvage one dataset per folder"));
    }
    ShardInfo info = it->second.first;
    struct stat st;
    if (::stat(s.salvage.output.c_str(), &st) != 0) {
      return absl::NotFoundError(absl::StrCat(s.salvage.output, ": the salvaged shard is gone"));
    }
    ASSIGN_OR_RETURN(uint32_t crc, FileCrc32c(s.salvage.output));
    info.set_file(std::string(BaseName(s.salvage.output)));
    info.set_index_file(std::string(BaseName(IndexPathFor(s.salvage.output))));
    info.set_records(s.salvage.records_kept);
    info.set_bytes(st.st_size);
    info.set_crc32c(absl::StrFormat("%08x", crc));
    SplitInfo* split = nullptr;
    for (SplitInfo& sp : *m.mutable_splits()) {
      if (sp.name() == info.split()) split = &sp;
    }
    if (split == nullptr) {
      split = m.add_splits();
      split->set_name(info.split());
    }
    split->set_records(split->records() + info.records());
    split->set_shards(split->shards() + 1);
    m.set_total_records(m.total_records() + info.records());
    m.set_total_bytes(m.total_bytes() + info.bytes());
    *m.add_shards() = std::move(info);
  }
  if (source == nullptr) return std::string();
  const std::string out = JoinPath(salvage_dir, kManifestName);
  RETURN_IF_ERROR(WriteFileAtomically(out, ManifestToJson(m), overwrite));
  return out;
}

}  // namespace shardfeed
