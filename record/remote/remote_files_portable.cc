// record/remote/remote_files.h in --config=portable builds, which carry no
// libcurl: every remote path is UNIMPLEMENTED, saying why.
#include "absl/strings/str_cat.h"
#include "record/remote/remote_files.h"

namespace shardfeed {
namespace remote {
namespace {

absl::Status NoRemote(const std::string& path) {
  return absl::UnimplementedError(absl::StrCat(
      path, ": this build (--config=portable) reads local files only; remote paths need the "
            "default build (libcurl)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RandomAccessSource>> OpenObject(const std::string& path) {
  return NoRemote(path);
}
absl::StatusOr<std::string> ReadObject(const std::string& path) { return NoRemote(path); }
absl::StatusOr<RemoteKind> StatRemote(const std::string& path) { return NoRemote(path); }
absl::StatusOr<RemoteEntries> ListRemoteDir(const std::string& dir) { return NoRemote(dir); }
absl::StatusOr<std::vector<std::string>> GlobRemote(const std::string& pattern) {
  return NoRemote(pattern);
}
void SetAnonymousAccess(bool) {}
RemoteTraffic RemoteTrafficSoFar() { return RemoteTraffic(); }
double LastFirstByteSeconds() { return 0; }
absl::Status WriteObject(const std::string& path, const std::string&) { return NoRemote(path); }

}  // namespace remote
}  // namespace shardfeed
