// UploadLine: the progress line of an upload to a bucket (convert, merge
// and copy with an s3:// or gs:// output): files and bytes uploaded so far,
// shown as cli/progress.h shows progress (terminals only). The line names
// the output as the user typed it (s3://BUCKET/PREFIX: no secrets in it).
// Callback() may be called from any thread (a lock is held).
#ifndef SHARDFEED_CLI_UPLOAD_PROGRESS_H_
#define SHARDFEED_CLI_UPLOAD_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "cli/progress.h"

namespace shardfeed::cli {

class UploadLine {
 public:
  // `output` "" or not a bucket, or `quiet`: Callback() is empty.
  UploadLine(const std::string& output, bool quiet);
  UploadLine(const UploadLine&) = delete;
  UploadLine& operator=(const UploadLine&) = delete;
  // Valid while this line lives.
  std::function<void(uint64_t bytes)> Callback();
  // Clears the line (before the summary).
  void Finish();

 private:
  const bool enabled_;
  const std::string label_;
  std::mutex mu_;
  ProgressLine line_;   // guarded by mu_
  uint64_t files_ = 0;  // guarded by mu_
  uint64_t bytes_ = 0;  // guarded by mu_
};

}  // namespace shardfeed::cli

#endif  // SHARDFEED_CLI_UPLOAD_PROGRESS_H_
