#include "cli/upload_progress.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace shardfeed::cli {

UploadLine::UploadLine(const std::string& output, bool quiet)
    : enabled_(!quiet && (absl::StartsWithIgnoreCase(output, "s3://") ||
                          absl::StartsWithIgnoreCase(output, "gs://"))),
      label_(absl::StrCat("upload to ", output)) {}

std::function<void(uint64_t)> UploadLine::Callback() {
  if (!enabled_) return nullptr;
  return [this](uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    ++files_;
    bytes_ += bytes;
    line_.Update(label_, files_, 0, bytes_, "files");
  };
}

void UploadLine::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  line_.Finish();
}

}  // namespace shardfeed::cli
