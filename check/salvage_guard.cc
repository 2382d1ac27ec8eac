#include "check/salvage_guard.h"

#include <sys/stat.h>

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "record/index.h"

namespace shardfeed {
namespace {

using FileId = std::pair<dev_t, ino_t>;

bool IdOf(const std::string& path, FileId* id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  *id = {st.st_dev, st.st_ino};
  return true;
}

}  // namespace

absl::Status RefuseSalvageOverInputs(const std::vector<std::string>& shards,
                                     const std::string& salvage_dir) {
  std::map<FileId, std::string> inputs;  // every input shard and index file
  FileId id;
  for (const std::string& s : shards) {
    if (IdOf(s, &id)) inputs.emplace(id, s);
    if (IdOf(IndexPathFor(s), &id)) inputs.emplace(id, IndexPathFor(s));
  }
  for (const std::string& s : shards) {
    const size_t slash = s.rfind('/');
    const std::string out =
        absl::StrCat(salvage_dir, "/", slash == std::string::npos ? s : s.substr(slash + 1));
    for (const std::string& target : {out, IndexPathFor(out)}) {
      auto it = IdOf(target, &id) ? inputs.find(id) : inputs.end();
      if (it == inputs.end()) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "--salvage ", salvage_dir, " would replace the input ", it->second,
          " (nothing is modified in place): salvage into another folder"));
    }
  }
  return absl::OkStatus();
}

}  // namespace shardfeed
