#include "record/shard_name.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace shardfeed {
namespace {

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

}  // namespace

absl::string_view BaseName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  if (dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

std::string DirName(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

bool IsIndexName(absl::string_view name) { return absl::EndsWith(name, ".index"); }

bool IsManifestName(absl::string_view name) { return name == kManifestName; }

bool IsTemporaryName(absl::string_view name) {
  return absl::StartsWith(name, ".") || absl::StrContains(name, ".partial") ||
         absl::StrContains(name, ".tmp-");
}

std::string TfShardPrefix(absl::string_view name) {
  // NAME-NNNNN-of-NNNNN, then nothing or ".ext...".
  size_t of = name.rfind("-of-");
  if (of == absl::string_view::npos) return "";
  absl::string_view tail = name.substr(of + 4);
  absl::string_view total = tail.substr(0, tail.find('.'));
  if (!AllDigits(total)) return "";
  absl::string_view head = name.substr(0, of);
  size_t dash = head.rfind('-');
  if (dash == absl::string_view::npos || dash == 0 || !AllDigits(head.substr(dash + 1))) {
    return "";
  }
  return std::string(head.substr(0, dash));
}

bool IsShardName(absl::string_view name) {
  if (IsTemporaryName(name) || IsIndexName(name) || IsManifestName(name)) return false;
  return absl::StrContains(name, ".tfrecord") || !TfShardPrefix(name).empty();
}

}  // namespace shardfeed
