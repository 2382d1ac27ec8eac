#include "converter/output_dir.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "converter/convert.h"
#include "converter/file_list.h"
#include "reader/shard_discovery.h"
#include "record/file.h"
#include "record/shard_name.h"
#include "record/storage.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

// Names in `dir` that a run for `prefixes` would write or leave stale.
absl::StatusOr<std::vector<std::string>> OutputNames(const std::string& dir,
                                                     const std::vector<std::string>& prefixes) {
  static const std::regex kShard(R"(-\d{5,}-of-\d{5,}\.tfrecord(\.gz|\.zlib)?(\.index)?$)");
  std::vector<std::string> found;
  ASSIGN_OR_RETURN(DirEntries e, ListDir(dir));
  for (const std::string& f : e.files) {
    bool ours = f == "manifest.json";
    for (const std::string& p : prefixes) {
      ours = ours || (f.compare(0, p.size(), p) == 0 && std::regex_match(f.substr(p.size()), kShard));
    }
    if (ours) found.push_back(f);
  }
  return found;
}

// The files a shardfeed manifest.json in `dir` lists (with itself); none if
// there is no manifest, or one that shardfeed did not write.
std::set<std::string> ListedByShardfeedManifest(const std::string& dir) {
  std::set<std::string> listed;
  absl::StatusOr<Manifest> m = ReadManifest(JoinPath(dir, kManifestName));
  if (!m.ok() || m->tool() != "shardfeed") return listed;
  // A name with a '/' is not a file of this folder: never ours to replace.
  auto add = [&listed](const std::string& name) {
    if (!name.empty() && name.find('/') == std::string::npos) listed.insert(name);
  };
  for (const ShardInfo& s : m->shards()) {
    add(s.file());
    add(s.index_file());
  }
  add("manifest.json");
  return listed;
}

std::string NameSome(const std::vector<std::string>& names) {
  constexpr size_t kShown = 5;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(kShown, names.size()));
  std::string text = absl::StrJoin(shown, ", ");
  if (names.size() > kShown) absl::StrAppend(&text, " and ", names.size() - kShown, " more");
  return text;
}

// An absolute path without ".", ".." or symbolic links, also for a path
// whose last components do not exist yet.
std::string Resolve(const std::string& path) {
  std::string existing = path.empty() ? "." : path;
  std::vector<std::string> missing;
  char buf[PATH_MAX];
  while (::realpath(existing.c_str(), buf) == nullptr) {
    size_t slash = existing.find_last_of('/');
    if (slash == std::string::npos) {
      missing.push_back(existing);
      existing = ".";
    } else {
      missing.push_back(existing.substr(slash + 1));
      existing = slash == 0 ? "/" : existing.substr(0, slash);
    }
  }
  std::vector<std::string> parts = absl::StrSplit(buf, '/', absl::SkipEmpty());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (*it == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!it->empty() && *it != ".") {
      parts.push_back(*it);
    }
  }
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

bool Inside(const std::string& path, const std::string& folder) {
  return path == folder || folder == "/" ||
         (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
          path[folder.size()] == '/');
}

absl::Status RefuseOutputInside(const std::string& input, const std::string& output,
                                const std::string& why) {
  if (Inside(Resolve(output), Resolve(input))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the output folder ", output, " is inside the input folder ", input, " (", why,
        ", so the next run would read the shards as input): choose an --output outside it"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> ExistsOrError(const std::string& path) {
  if (!IsRemotePath(path)) return PathExists(path);
  absl::StatusOr<PathKind> kind = StatPath(path);
  if (absl::IsNotFound(kind.status())) return false;
  if (!kind.ok()) {
    return absl::Status(kind.status().code(),
                        absl::StrCat(path, ": cannot tell whether it exists (so it is not "
                                           "replaced unasked): ",
                                     kind.status().message()));
  }
  return *kind != PathKind::kMissing;
}

absl::StatusOr<std::vector<std::string>> PreviousDatasetToReplace(
    const std::string& dir, const std::vector<std::string>& prefixes, bool overwrite) {
  ASSIGN_OR_RETURN(const bool dir_exists, ExistsOrError(dir));
  if (!dir_exists) return std::vector<std::string>{};
  ASSIGN_OR_RETURN(std::vector<std::string> present, OutputNames(dir, prefixes));
  if (present.empty()) return present;
  const std::set<std::string> listed = ListedByShardfeedManifest(dir);
  std::vector<std::string> foreign;
  for (const std::string& f : present) {
    if (!listed.count(f)) foreign.push_back(f);
  }
  if (!foreign.empty()) {
    return absl::AlreadyExistsError(absl::StrCat(
        dir, " holds files that shardfeed did not write (no shardfeed manifest.json there "
        "lists them): ", NameSome(foreign), "; convert replaces only a dataset it wrote, even "
        "with --overwrite: move them away or choose another --output"));
  }
  if (!overwrite) {
    return absl::AlreadyExistsError(absl::StrCat(dir, " already holds a dataset (",
                                                 NameSome(present),
                                                 "); use --overwrite to replace it"));
  }
  std::vector<std::string> previous;
  for (const std::string& f : listed) {
    ASSIGN_OR_RETURN(const bool exists, ExistsOrError(absl::StrCat(dir, "/", f)));
    if (exists) previous.push_back(f);
  }
  return previous;
}

absl::Status RefuseOutputInInputFolder(const std::string& input, const std::string& output) {
  std::string folder = input;
  struct stat st;
  if (::stat(input.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    // A file or a glob: the folder of its path up to the first wildcard.
    const size_t wild = input.find_first_of("*?[");
    if (wild != std::string::npos) {
      absl::StatusOr<std::vector<std::string>> matches = Glob(input);
      if (absl::IsNotFound(matches.status())) return matches.status();
    } else if (!PathExists(input)) {
      return absl::NotFoundError(absl::StrCat("--input ", input, ": no such file or directory"));
    }
    const size_t slash = input.rfind('/', wild == std::string::npos ? std::string::npos : wild);
    folder = slash == std::string::npos ? "." : slash == 0 ? "/" : input.substr(0, slash);
  }
  return RefuseOutputInside(folder, output,
                            "it holds the tfrecord input; the new shards would go beside it");
}

absl::Status RefuseBucketOutputInInput(const std::string& input, const std::string& output) {
  if (!IsRemotePath(input)) return absl::OkStatus();
  std::string folder = input.substr(0, input.find_first_of("*?["));
  const size_t slash = folder.rfind('/');
  const bool names_a_file = folder.size() != input.size() ||
                            (slash != std::string::npos && folder.find('.', slash) != std::string::npos);
  if (names_a_file && slash != std::string::npos) folder = folder.substr(0, slash);
  folder = StripTrailingSlashes(folder);
  const std::string out = StripTrailingSlashes(output);
  if (out == folder || absl::StartsWith(out, folder + "/")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--output ", output, " is inside ", folder, ", which holds the tfrecord input (the next "
        "run over it would read the new shards as input): choose an --output outside it"));
  }
  return absl::OkStatus();
}

absl::Status RefuseNestedFolders(const std::string& input, const std::string& output,
                                 const std::string& why) {
  const std::string in = Resolve(input);
  RETURN_IF_ERROR(RefuseOutputInside(input, output, why));
  const std::string out = Resolve(output);
  if (Inside(in, out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the input folder ", input, " is inside the output folder ", output,
        ": choose an --output that does not contain the input"));
  }
  return absl::OkStatus();
}

}  // namespace shardfeed
