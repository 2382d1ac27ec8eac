#include "reader/dataset.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "reader/shard_discovery.h"
#include "record/file.h"
#include "record/shard_name.h"
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

// The split to read when none was asked for and `splits` (distinct, in
// order) are in the data; "" = everything.
absl::StatusOr<std::string> DefaultSplit(const std::vector<std::string>& splits,
                                         const std::string& where, Dataset* ds) {
  if (splits.size() < 2) return std::string();
  const std::string names = absl::StrJoin(splits, ", ");
  if (std::find(splits.begin(), splits.end(), "train") == splits.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, " holds the splits ", names, ": choose one (split=, --split)"));
  }
  ds->notes.push_back(absl::StrCat(where, " holds the splits ", names,
                                   ": reading 'train' (choose with split=, --split)"));
  return std::string("train");
}

void AddDistinct(const std::string& s, std::vector<std::string>* v) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

absl::Status AddManifestShards(const ManifestInput& m, const std::string& split, Dataset* ds) {
  RETURN_IF_ERROR(m.parsed);
  const std::vector<int> shards = m.shards();
  std::vector<std::string> splits;
  for (int i : shards) AddDistinct(m.manifest.shards(i).split(), &splits);
  std::string chosen = split;
  if (chosen.empty() && m.whole) {
    ASSIGN_OR_RETURN(chosen, DefaultSplit(splits, m.path, ds));
  }
  for (int i : shards) {
    const ShardInfo& info = m.manifest.shards(i);
    if (!chosen.empty() && info.split() != chosen) continue;
    RETURN_IF_ERROR(AddShard(m.ShardPath(info), info.records(), ds));
  }
  if (ds->shards.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(m.path, ": no shards for split '", chosen,
                                                   "' (it has: ", absl::StrJoin(splits, ", "), ")"));
  }
  ds->split = chosen;
  ds->manifest = m.manifest;
  return absl::OkStatus();
}

// Shards without a manifest: the split is the name's prefix.
absl::StatusOr<std::vector<std::string>> SelectLoose(const std::vector<LooseShard>& loose,
                                                     const std::string& split, Dataset* ds) {
  std::vector<std::string> out;
  if (loose.empty()) return out;
  std::string chosen = split;
  if (chosen.empty()) {
    std::vector<std::string> splits;
    bool all_listed_tf = true;
    for (const LooseShard& s : loose) {
      std::string prefix = TfShardPrefix(BaseName(s.path));
      all_listed_tf = all_listed_tf && s.listed && !prefix.empty();
      AddDistinct(prefix, &splits);
    }
    if (all_listed_tf) {
      ASSIGN_OR_RETURN(chosen, DefaultSplit(splits, DirName(loose.front().path), ds));
    }
  }
  for (const LooseShard& s : loose) {
    if (chosen.empty() || absl::StartsWith(BaseName(s.path), chosen + "-")) out.push_back(s.path);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "split '", chosen, "': without a manifest a split is the shards named '", chosen,
        "-*', and none of the ", loose.size(), " shards (", BaseName(loose.front().path),
        loose.size() > 1 ? ", ..." : "", ") is"));
  }
  ds->split = chosen;
  return out;
}

}  // namespace

int64_t Dataset::total_records() const {
  int64_t n = 0;
  for (const auto& s : shards) n += s.records;
  return n;
}

absl::StatusOr<Dataset> Dataset::Open(const std::vector<std::string>& paths,
                                      const std::string& split) {
  ASSIGN_OR_RETURN(ShardInputs in, FindShards(paths));
  Dataset ds;
  if (in.manifests.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("give one manifest per Loader (",
                                                   in.manifests[0].path, ", ",
                                                   in.manifests[1].path, ")"));
  }
  if (!in.manifests.empty()) RETURN_IF_ERROR(AddManifestShards(in.manifests[0], split, &ds));
  ASSIGN_OR_RETURN(std::vector<std::string> loose,
                   SelectLoose(in.loose, split, &ds));
  for (const std::string& f : loose) RETURN_IF_ERROR(AddShard(f, -1, &ds));
  if (ds.shards.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the dataset has no shards", in.skipped.empty() ? "" : " (", absl::StrJoin(in.skipped, "; "),
        in.skipped.empty() ? "" : ")"));
  }
  return ds;
}

}  // namespace shardfeed
