#include "record/file_list.h"

#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "record/errors.h"
#include "record/remote/remote_files.h"
#include "record/storage.h"
#include "record/status_macros.h"

namespace shardfeed {

absl::StatusOr<DirEntries> ListDir(const std::string& dir) {
  if (IsRemotePath(dir)) {
    ASSIGN_OR_RETURN(remote::RemoteEntries e, remote::ListRemoteDir(dir));
    DirEntries out;
    out.dirs = std::move(e.dirs);
    out.files = std::move(e.files);
    return out;
  }
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return IoError("cannot list directory", dir, errno);
  DirEntries out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name[0] == '.') continue;
    struct stat st;
    if (stat(absl::StrCat(dir, "/", name).c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) out.dirs.push_back(name);
    else if (S_ISREG(st.st_mode)) out.files.push_back(name);
  }
  closedir(d);
  std::sort(out.dirs.begin(), out.dirs.end());
  std::sort(out.files.begin(), out.files.end());
  return out;
}

absl::StatusOr<std::vector<std::string>> ListFilesRecursive(const std::string& dir) {
  std::vector<std::string> out;
  std::vector<std::string> pending = {""};
  while (!pending.empty()) {
    std::string rel = pending.back();
    pending.pop_back();
    ASSIGN_OR_RETURN(DirEntries e, ListDir(rel.empty() ? dir : absl::StrCat(dir, "/", rel)));
    for (const auto& f : e.files) out.push_back(rel.empty() ? f : absl::StrCat(rel, "/", f));
    for (const auto& d : e.dirs) pending.push_back(rel.empty() ? d : absl::StrCat(rel, "/", d));
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::vector<std::string>> Glob(const std::string& pattern) {
  if (IsRemotePath(pattern)) return remote::GlobRemote(pattern);
  glob_t g;
  int rc = glob(pattern.c_str(), GLOB_MARK, nullptr, &g);
  if (rc == GLOB_NOMATCH) {
    globfree(&g);
    return absl::NotFoundError(absl::StrCat("no file matches '", pattern, "'"));
  }
  if (rc != 0) {
    globfree(&g);
    return absl::UnavailableError(absl::StrCat("glob '", pattern, "' failed"));
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < g.gl_pathc; ++i) {
    std::string p = g.gl_pathv[i];
    if (!p.empty() && p.back() != '/') out.push_back(p);  // GLOB_MARK: dirs end in '/'
  }
  globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace shardfeed
