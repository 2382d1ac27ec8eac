#include "check/salvage_guard.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "record/index.h"
#include "record/shard_name.h"

namespace shardfeed {
namespace {

bool IdOf(const std::string& path, std::pair<dev_t, ino_t>* id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  *id = {st.st_dev, st.st_ino};
  return true;
}

}  // namespace

SalvageGuard::SalvageGuard(const std::vector<std::string>& shards) {
  std::pair<dev_t, ino_t> id;
  for (const std::string& s : shards) {
    if (IdOf(s, &id)) inputs_.emplace(id, s);
    if (IdOf(IndexPathFor(s), &id)) inputs_.emplace(id, IndexPathFor(s));
  }
}

std::string SalvageGuard::OutputFor(const std::string& shard, const std::string& salvage_dir) {
  return JoinPath(salvage_dir, BaseName(shard));
}

absl::Status SalvageGuard::Check(const std::string& shard, const std::string& salvage_dir) const {
  const std::string out = OutputFor(shard, salvage_dir);
  std::pair<dev_t, ino_t> id;
  for (const std::string& target : {out, IndexPathFor(out)}) {
    auto it = IdOf(target, &id) ? inputs_.find(id) : inputs_.end();
    if (it == inputs_.end()) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "--salvage ", salvage_dir, ": the salvaged ", BaseName(shard), " would replace the input ",
        it->second, " (nothing is modified in place): salvage into another folder"));
  }
  return absl::OkStatus();
}

}  // namespace shardfeed
