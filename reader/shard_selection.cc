#include "reader/shard_selection.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "reader/shard_discovery.h"
#include "record/shard_name.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

// The split to read when none was asked for and `splits` (distinct, in
// order) are in the data; "" = everything.
absl::StatusOr<std::string> DefaultSplit(const std::vector<std::string>& splits,
                                         const std::string& where, SplitDefault policy,
                                         ShardSelection* out) {
  if (splits.size() < 2 || policy == SplitDefault::kAll) return std::string();
  const std::string names = absl::StrJoin(splits, ", ");
  if (std::find(splits.begin(), splits.end(), "train") == splits.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, " holds the splits ", names, ": choose one (split=, --split)"));
  }
  out->notes.push_back(absl::StrCat(where, " holds the splits ", names,
                                    ": reading 'train' (choose with split=, --split)"));
  return std::string("train");
}

void AddDistinct(const std::string& s, std::vector<std::string>* v) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

absl::Status AddManifestShards(const ManifestInput& m, const std::string& split,
                               SplitDefault policy, ShardSelection* out) {
  RETURN_IF_ERROR(m.parsed);
  const std::vector<int> shards = m.shards();
  std::vector<std::string> splits;
  for (int i : shards) AddDistinct(m.manifest.shards(i).split(), &splits);
  std::string chosen = split;
  if (chosen.empty() && m.whole) {
    ASSIGN_OR_RETURN(chosen, DefaultSplit(splits, m.path, policy, out));
  }
  for (int i : shards) {
    const ShardInfo& info = m.manifest.shards(i);
    if (!chosen.empty() && info.split() != chosen) continue;
    out->shards.push_back({m.ShardPath(info), info.records()});
  }
  if (out->shards.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(m.path, ": no shards for split '", chosen,
                                                   "' (it has: ", absl::StrJoin(splits, ", "), ")"));
  }
  out->split = chosen;
  out->manifest = m.manifest;
  return absl::OkStatus();
}

// Shards without a manifest: the split is the name's prefix.
absl::Status AddLooseShards(const std::vector<LooseShard>& loose, const std::string& split,
                            SplitDefault policy, ShardSelection* out) {
  if (loose.empty()) return absl::OkStatus();
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
      ASSIGN_OR_RETURN(chosen, DefaultSplit(splits, DirName(loose.front().path), policy, out));
    }
  }
  size_t added = 0;
  for (const LooseShard& s : loose) {
    if (chosen.empty() || absl::StartsWith(BaseName(s.path), chosen + "-")) {
      out->shards.push_back({s.path, -1});
      ++added;
    }
  }
  if (added == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "split '", chosen, "': without a manifest a split is the shards named '", chosen,
        "-*', and none of the ", loose.size(), loose.size() == 1 ? " shard (" : " shards (",
        BaseName(loose.front().path), loose.size() > 1 ? ", ..." : "", ") is"));
  }
  if (out->split.empty()) out->split = chosen;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShardSelection> SelectShards(const std::vector<std::string>& paths,
                                            const std::string& split,
                                            SplitDefault split_default) {
  ASSIGN_OR_RETURN(ShardInputs in, FindShards(paths));
  if (in.manifests.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("give one dataset at a time (",
                                                   in.manifests[0].path, ", ",
                                                   in.manifests[1].path, ")"));
  }
  ShardSelection out;
  if (!in.manifests.empty()) {
    RETURN_IF_ERROR(AddManifestShards(in.manifests[0], split, split_default, &out));
  }
  RETURN_IF_ERROR(AddLooseShards(in.loose, split, split_default, &out));
  if (out.shards.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no shards", in.skipped.empty() ? "" : " (", absl::StrJoin(in.skipped, "; "),
        in.skipped.empty() ? "" : ")"));
  }
  return out;
}

}  // namespace shardfeed
