#include "check/check_inputs.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "reader/shard_discovery.h"
#include "record/file.h"
#include "record/file_list.h"
#include "record/shard_name.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

// "path: message" → "message" (statuses that carry the file name).
std::string WithoutPath(absl::string_view message, const std::string& path) {
  if (absl::StartsWith(message, path + ": ")) message.remove_prefix(path.size() + 2);
  return std::string(message);
}

absl::Status AddManifest(const ManifestInput& m, CheckInputs* in) {
  in->manifest_paths.push_back(m.path);
  const std::string dir = DirName(m.path);
  std::set<std::string> listed_names;
  if (!m.parsed.ok()) {
    in->problems.push_back({m.path, -1, WithoutPath(m.parsed.message(), m.path)});
  } else {
    in->manifests.emplace_back(m.path, m.manifest);
    for (const ShardInfo& s : m.manifest.shards()) listed_names.insert(s.file());
    for (int i : m.shards()) {
      const ShardInfo& s = m.manifest.shards(i);
      const std::string shard = m.ShardPath(s);
      if (!PathExists(shard)) {
        in->problems.push_back(
            {m.path, -1, absl::StrCat("lists shard ", s.file(), ", which is missing")});
        continue;
      }
      in->listed[shard] = {s, in->manifests.size() - 1};
      in->shards.push_back(shard);
    }
  }
  if (!m.whole) return absl::OkStatus();
  // The dataset as a whole: no shard in its folder that it does not list.
  ASSIGN_OR_RETURN(DirEntries entries, ListDir(dir));
  for (const std::string& f : entries.files) {
    if (!IsShardName(f) || listed_names.count(f)) continue;
    const std::string shard = JoinPath(dir, f);
    in->problems.push_back(
        {shard, -1, absl::StrCat("shard present but not listed in ", kManifestName)});
    if (!m.parsed.ok()) in->shards.push_back(shard);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CheckInputs> ExpandCheckInputs(const std::vector<std::string>& paths) {
  ASSIGN_OR_RETURN(ShardInputs found, FindShards(paths));
  CheckInputs in;
  for (const ManifestInput& m : found.manifests) RETURN_IF_ERROR(AddManifest(m, &in));
  for (const LooseShard& s : found.loose) in.shards.push_back(s.path);
  std::sort(in.shards.begin(), in.shards.end());
  in.shards.erase(std::unique(in.shards.begin(), in.shards.end()), in.shards.end());
  if (in.shards.empty() && in.problems.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nothing to check", found.skipped.empty() ? "" : " (",
        absl::StrJoin(found.skipped, "; "), found.skipped.empty() ? "" : ")"));
  }
  return in;
}

}  // namespace shardfeed
