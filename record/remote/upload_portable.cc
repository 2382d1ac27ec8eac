// record/remote/upload.h in --config=portable builds, which carry no
// libcurl: uploads are UNIMPLEMENTED, saying why.
#include "absl/strings/str_cat.h"
#include "record/remote/upload.h"

namespace shardfeed {
namespace remote {
namespace {

absl::Status NoUpload(const std::string& url) {
  return absl::UnimplementedError(absl::StrCat(
      url, ": this build (--config=portable) writes local files only; writing to a bucket "
           "needs the default build (libcurl)"));
}

}  // namespace

absl::StatusOr<UploadOptions> UploadOptions::FromEnvironment() { return UploadOptions(); }
absl::Status UploadFile(const std::string&, const std::string& url, const UploadOptions&) {
  return NoUpload(url);
}
absl::Status UploadFiles(const std::vector<UploadItem>& items, const UploadOptions&,
                         std::vector<std::string>*, const std::function<void(uint64_t)>&) {
  return items.empty() ? absl::OkStatus() : NoUpload(items[0].url);
}
absl::Status DeleteObject(const std::string& url, bool) { return NoUpload(url); }

}  // namespace remote
}  // namespace shardfeed
