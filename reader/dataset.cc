#include "reader/dataset.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "reader/shard_selection.h"
#include "record/file.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

absl::Status AddShard(const std::string& path, int64_t known_records, Dataset* ds) {
  ShardEntry e;
  e.path = path;
  std::string index_path = IndexPathFor(path);
  if (PathExists(index_path)) {
    ASSIGN_OR_RETURN(e.index, ReadIndexFile(index_path));
    e.records = static_cast<int64_t>(e.index.size());
    if (known_records >= 0 && known_records != e.records) {
      return absl::DataLossError(absl::StrCat(index_path, ": lists ", e.records,
                                              " records, the manifest says ", known_records,
                                              " (run shardfeed check)"));
    }
  } else if (known_records >= 0) {
    e.records = known_records;
  } else {
    ASSIGN_OR_RETURN(e.index, BuildIndex(path));
    e.records = static_cast<int64_t>(e.index.size());
  }
  ds->shards.push_back(std::move(e));
  return absl::OkStatus();
}

}  // namespace

int64_t Dataset::total_records() const {
  int64_t n = 0;
  for (const auto& s : shards) n += s.records;
  return n;
}

absl::StatusOr<Dataset> Dataset::Open(const std::vector<std::string>& paths,
                                      const std::string& split) {
  ASSIGN_OR_RETURN(ShardSelection selected, SelectShards(paths, split));
  Dataset ds;
  ds.manifest = std::move(selected.manifest);
  ds.split = std::move(selected.split);
  ds.notes = std::move(selected.notes);
  for (const SelectedShard& s : selected.shards) RETURN_IF_ERROR(AddShard(s.path, s.records, &ds));
  return ds;
}

}  // namespace shardfeed
