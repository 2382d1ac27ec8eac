#include "reader/shard_discovery.h"

#include <algorithm>
#include <map>
#include <set>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "record/file.h"
#include "record/file_list.h"
#include "record/shard_name.h"
#include "record/status_macros.h"
#include "record/storage.h"

namespace shardfeed {
namespace {

class Finder {
 public:
  absl::Status Add(const std::string& given) {
    const std::string p = StripTrailingSlashes(given);
    if (p.find_first_of("*?[") != std::string::npos) {
      ASSIGN_OR_RETURN(std::vector<std::string> matches, Glob(p));
      for (const std::string& m : matches) Classify(m, /*from_glob=*/true);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(PathKind kind, StatPath(p));
    if (kind == PathKind::kFolder) return AddFolder(p);
    if (kind == PathKind::kMissing) {
      return absl::NotFoundError(absl::StrCat(p, ": no such file or directory"));
    }
    Classify(p, /*from_glob=*/false);
    return absl::OkStatus();
  }

  ShardInputs Finish() {
    // Shards given by path go to the manifest beside them when it lists them.
    std::set<std::string> seen;
    for (const LooseShard& s : candidates_) {
      if (!seen.insert(s.path).second) continue;
      ManifestInput* m = ManifestBeside(s.path);
      int listed_as = m == nullptr ? -1 : ListedIndex(*m, s.path);
      if (listed_as < 0) {
        out_.loose.push_back(s);
      } else if (!m->whole) {
        m->selected.push_back(listed_as);
      }
    }
    ShardInputs result;
    for (ManifestInput& m : manifests_) {
      if (!m.whole && m.selected.empty()) continue;  // looked at, not used
      // Each once, in the order given.
      std::vector<int> once;
      for (int i : m.selected) {
        if (std::find(once.begin(), once.end(), i) == once.end()) once.push_back(i);
      }
      m.selected = m.whole ? std::vector<int>() : std::move(once);
      result.manifests.push_back(std::move(m));
    }
    result.loose = std::move(out_.loose);
    result.skipped = std::move(out_.skipped);
    return result;
  }

 private:
  absl::Status AddFolder(const std::string& dir) {
    const std::string manifest = JoinPath(dir, kManifestName);
    if (PathExists(manifest)) {
      OpenManifest(manifest)->whole = true;
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(DirEntries entries, ListDir(dir));
    bool any = false;
    for (const std::string& f : entries.files) {
      if (!IsShardName(f)) continue;
      candidates_.push_back({JoinPath(dir, f), /*listed=*/true});
      any = true;
    }
    if (!any) {
      return absl::InvalidArgumentError(absl::StrCat(
          dir, ": no shards here (names holding .tfrecord, or NAME-NNNNN-of-NNNNN) and no ",
          kManifestName));
    }
    return absl::OkStatus();
  }

  void Classify(const std::string& path, bool from_glob) {
    const absl::string_view name = BaseName(path);
    if (IsManifestName(name)) {
      OpenManifest(path)->whole = true;
    } else if (IsIndexName(name)) {
      out_.skipped.push_back(absl::StrCat(path, ": an index file, not a shard"));
    } else if (from_glob && IsTemporaryName(name)) {
      out_.skipped.push_back(absl::StrCat(path, ": a writer's temporary file, not a shard"));
    } else {
      candidates_.push_back({path, /*listed=*/false});
    }
  }

  ManifestInput* OpenManifest(const std::string& path) {
    auto [it, inserted] = order_.emplace(path, manifests_.size());
    if (inserted) {
      ManifestInput m;
      m.path = path;
      auto parsed = ReadManifest(path);
      if (parsed.ok()) {
        m.manifest = std::move(*parsed);
      } else {
        m.parsed = parsed.status();
      }
      manifests_.push_back(std::move(m));
    }
    return &manifests_[it->second];
  }

  // The manifest.json in the shard's folder, if there is one that parses.
  ManifestInput* ManifestBeside(const std::string& shard) {
    const std::string path = JoinPath(DirName(shard), kManifestName);
    if (!order_.count(path) && !PathExists(path)) return nullptr;
    ManifestInput* m = OpenManifest(path);
    return m->parsed.ok() ? m : nullptr;
  }

  static int ListedIndex(const ManifestInput& m, const std::string& shard) {
    const absl::string_view name = BaseName(shard);
    for (int i = 0; i < m.manifest.shards_size(); ++i) {
      if (m.manifest.shards(i).file() == name) return i;
    }
    return -1;
  }

  std::vector<ManifestInput> manifests_;
  std::map<std::string, size_t> order_;  // manifest path → slot in manifests_ (given order)
  std::vector<LooseShard> candidates_;
  ShardInputs out_;
};

}  // namespace

std::vector<int> ManifestInput::shards() const {
  if (!whole) return selected;
  std::vector<int> all(static_cast<size_t>(manifest.shards_size()));
  for (int i = 0; i < manifest.shards_size(); ++i) all[static_cast<size_t>(i)] = i;
  return all;
}

std::string ManifestInput::ShardPath(const ShardInfo& info) const {
  return JoinPath(DirName(path), info.file());
}

absl::StatusOr<Manifest> ReadManifest(const std::string& path) {
  ASSIGN_OR_RETURN(std::string json, ReadFileToString(path));
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  Manifest m;
  auto s = google::protobuf::util::JsonStringToMessage(json, &m, options);
  if (!s.ok()) {
    // protobuf's message spans lines (the text, a caret under it): its
    // first line says what is wrong.
    std::string why(s.message());
    why = why.substr(0, why.find('\n'));
    return absl::DataLossError(absl::StrCat(path, ": not a valid manifest (", why, ")"));
  }
  return m;
}

absl::StatusOr<ShardInputs> FindShards(const std::vector<std::string>& paths) {
  Finder finder;
  for (const std::string& p : paths) RETURN_IF_ERROR(finder.Add(p));
  return finder.Finish();
}

}  // namespace shardfeed
