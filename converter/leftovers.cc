#include "converter/leftovers.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <regex>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "record/errors.h"

namespace shardfeed {
namespace {

// Group 1: the shard prefix; group 2: the writing process.
const std::regex& PartialPattern() {
  // (shard_writer.cc writes each finished shard's index beside it as .index)
  static const std::regex kPattern(
      R"(^\.(.+)-\d{5,}\.partial-(\d+)(\.index)?(\.tmp-\d+-\d+)?$)");
  return kPattern;
}
const std::regex& IndexTempPattern() {
  static const std::regex kPattern(
      R"(^(.+)-\d{5,}-of-\d{5,}\.tfrecord(\.gz|\.zlib)?\.index\.tmp-(\d+)-\d+$)");
  return kPattern;
}
// Group 1: the name being written; group 2: the writing process.
const std::regex& AtomicTempPattern() {
  static const std::regex kPattern(R"(^(.+)\.tmp-(\d+)-\d+$)");
  return kPattern;
}

// True unless `pid_text` names this process or another live one.
bool ProcessGone(const std::string& pid_text) {
  int64_t pid;
  if (!absl::SimpleAtoi(pid_text, &pid) || pid <= 0 || pid > INT32_MAX) return true;
  if (pid == ::getpid()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Every entry name in `dir`, hidden ones included; none if it cannot be read.
std::vector<std::string> AllNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  absl::Cleanup close = [d] { ::closedir(d); };
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string PartialShardPath(const std::string& dir, const std::string& prefix, int64_t k) {
  return absl::StrFormat("%s/.%s-%05d.partial-%d", dir, prefix, k, ::getpid());
}

bool IsConvertLeftover(const std::string& name, const std::vector<std::string>& prefixes) {
  std::smatch m;
  auto ours = [&prefixes](const std::string& p) {
    return std::find(prefixes.begin(), prefixes.end(), p) != prefixes.end();
  };
  if (std::regex_match(name, m, PartialPattern())) return ours(m[1].str()) && ProcessGone(m[2].str());
  if (std::regex_match(name, m, IndexTempPattern())) return ours(m[1].str()) && ProcessGone(m[3].str());
  if (std::regex_match(name, m, AtomicTempPattern())) {
    return m[1].str() == "manifest.json" && ProcessGone(m[2].str());
  }
  return false;
}

bool IsShardfeedLeftover(const std::string& name) {
  std::smatch m;
  if (std::regex_match(name, m, PartialPattern())) return ProcessGone(m[2].str());
  if (std::regex_match(name, m, AtomicTempPattern())) return ProcessGone(m[2].str());
  return false;
}

std::vector<std::string> FindLeftovers(const std::string& dir) {
  std::vector<std::string> found;
  for (const std::string& name : AllNames(dir)) {
    std::string path = absl::StrCat(dir, "/", name);
    if (IsShardfeedLeftover(name) && IsRegularFile(path)) found.push_back(std::move(path));
  }
  return found;
}

std::vector<std::string> FindLeftoversBeside(const std::vector<std::string>& files) {
  std::set<std::string> dirs;
  for (const std::string& f : files) {
    const size_t slash = f.rfind('/');
    dirs.insert(slash == std::string::npos ? "." : slash == 0 ? "/" : f.substr(0, slash));
  }
  std::vector<std::string> found;
  for (const std::string& d : dirs) {
    for (std::string& path : FindLeftovers(d)) found.push_back(std::move(path));
  }
  return found;
}

absl::StatusOr<std::vector<std::string>> RemoveConvertLeftovers(
    const std::string& dir, const std::vector<std::string>& prefixes) {
  std::vector<std::string> removed;
  for (const std::string& name : AllNames(dir)) {
    std::string path = absl::StrCat(dir, "/", name);
    if (!IsConvertLeftover(name, prefixes) || !IsRegularFile(path)) continue;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return IoError("cannot remove the leftover of an interrupted run", path, errno);
    }
    removed.push_back(name);
  }
  return removed;
}

std::string ReplaceTemporaryPath(const std::string& message, const std::string& partial_path,
                                 const std::string& shown) {
  size_t at = message.find(partial_path);
  if (at == std::string::npos) return message;
  size_t end = at + partial_path.size();
  std::smatch m;
  static const std::regex kTmpSuffix(R"(^\.tmp-\d+-\d+)");
  std::string rest = message.substr(end);
  if (std::regex_search(rest, m, kTmpSuffix)) end += m.length(0);
  return absl::StrCat(message.substr(0, at), shown, message.substr(end));
}

}  // namespace shardfeed
