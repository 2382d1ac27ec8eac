#include "reader/dataset.h"

#include <sys/stat.h>

#include <algorithm>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/file_list.h"
#include "record/file.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsShardFile(const std::string& name) {
  return absl::StrContains(name, ".tfrecord") && !absl::EndsWith(name, ".index") &&
         !absl::StrContains(name, ".tmp-") && !absl::StrContains(name, ".partial");
}

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
  Dataset ds;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::string manifest_path;
    if (absl::EndsWith(p, "manifest.json")) manifest_path = p;
    else if (IsDir(p) && PathExists(p + "/manifest.json")) manifest_path = p + "/manifest.json";
    if (!manifest_path.empty()) {
      if (ds.manifest.has_value()) {
        return absl::InvalidArgumentError("give one manifest per Loader");
      }
      ASSIGN_OR_RETURN(std::string json, ReadFileToString(manifest_path));
      Manifest m;
      google::protobuf::util::JsonParseOptions options;
      options.ignore_unknown_fields = true;
      auto s = google::protobuf::util::JsonStringToMessage(json, &m, options);
      if (!s.ok()) {
        return absl::DataLossError(absl::StrCat(manifest_path, ": not a valid manifest: ", s.ToString()));
      }
      std::string dir = manifest_path.substr(0, manifest_path.rfind('/') + 1);
      if (manifest_path.find('/') == std::string::npos) dir = "";
      for (const ShardInfo& info : m.shards()) {
        if (!split.empty() && info.split() != split) continue;
        RETURN_IF_ERROR(AddShard(dir + info.file(), info.records(), &ds));
      }
      if (ds.shards.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(manifest_path, ": no shards for split '", split, "'"));
      }
      ds.manifest = std::move(m);
      continue;
    }
    if (p.find_first_of("*?[") != std::string::npos) {
      ASSIGN_OR_RETURN(std::vector<std::string> matches, Glob(p));
      for (auto& m : matches) if (!absl::EndsWith(m, ".index")) files.push_back(m);
    } else if (IsDir(p)) {
      ASSIGN_OR_RETURN(DirEntries e, ListDir(p));
      for (const auto& f : e.files) if (IsShardFile(f)) files.push_back(p + "/" + f);
    } else if (PathExists(p)) {
      files.push_back(p);
    } else {
      return absl::NotFoundError(absl::StrCat(p, ": no such file or directory"));
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) RETURN_IF_ERROR(AddShard(f, -1, &ds));
  if (ds.shards.empty()) return absl::InvalidArgumentError("the dataset has no shards");
  return ds;
}

}  // namespace shardfeed
