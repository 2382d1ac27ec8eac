// Uploads of local files to object stores (s3://, gs://): one PUT for a
// file up to UploadOptions::multipart_threshold, S3's multipart upload
// beyond (CreateMultipartUpload, UploadPart, CompleteMultipartUpload; on any
// failure AbortMultipartUpload, so no orphan parts stay behind).
//
// Bodies are read from the file a part at a time (one part in memory per
// upload in flight, never the whole of a large file); each request is
// signed by curl's SigV4 signer with x-amz-content-sha256 set to the
// body's SHA-256 (OpenSSL), and retried with record/remote/http_client.h's
// backoff (5xx, 429, resets). An object appears whole or not at all.
//
// Errors (absl::Status): the object's path and the redacted URL with the
// HTTP status (record/remote/http_client.h), never credentials or upload
// IDs; NOT_FOUND for a missing local file. Thread-safe.
//
// Example:
//   ASSIGN_OR_RETURN(UploadOptions o, UploadOptions::FromEnvironment());
//   RETURN_IF_ERROR(UploadFile("/tmp/x/train-00000-of-00001.tfrecord",
//                              "s3://bucket/ds/train-00000-of-00001.tfrecord", o));
#ifndef SHARDFEED_RECORD_REMOTE_UPLOAD_H_
#define SHARDFEED_RECORD_REMOTE_UPLOAD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace shardfeed {
namespace remote {

// S3's limits: one PUT carries at most 5 GiB; every part but the last is at
// least 5 MiB; an upload has at most 10,000 parts.
inline constexpr uint64_t kMaxSinglePut = 5ull << 30;
inline constexpr uint64_t kMinPartSize = 5ull << 20;
inline constexpr int kMaxParts = 10'000;

struct UploadOptions {
  // A file larger than this goes up in parts (SHARDFEED_UPLOAD_THRESHOLD,
  // bytes or with KiB/MiB/GiB). At most kMaxSinglePut. Default: 32 MiB.
  uint64_t multipart_threshold = 32ull << 20;
  // Bytes per part (SHARDFEED_UPLOAD_PART_SIZE), at least kMinPartSize;
  // raised for a file that would need more than kMaxParts. Default: 16 MiB.
  uint64_t part_size = 16ull << 20;
  // Files uploaded at once by UploadFiles (SHARDFEED_UPLOAD_THREADS, 1..64).
  // Default: 4.
  int threads = 4;
  // Polled before each file and each part (may be empty): returning true
  // stops the upload with CANCELLED (a multipart upload is aborted).
  std::function<bool()> cancelled;

  // The defaults with the environment's overrides; INVALID_ARGUMENT for a
  // value out of range or not a size.
  static absl::StatusOr<UploadOptions> FromEnvironment();
};

// Uploads the file at `local_path` as the object `url`.
absl::Status UploadFile(const std::string& local_path, const std::string& url,
                        const UploadOptions& options);

struct UploadItem {
  std::string local_path, url;
};

// Uploads every item on options.threads threads. After the first failure no
// new upload starts (those in flight stop before their next part); the
// first failure is returned. options.cancelled is polled on the calling
// thread every 50 ms (true: CANCELLED, the same stop). `uploaded` (may be null) receives the URLs written, in no
// particular order, so that a caller can remove them again. `on_file` (may
// be empty) is called after each file with its size, from any thread.
absl::Status UploadFiles(const std::vector<UploadItem>& items, const UploadOptions& options,
                         std::vector<std::string>* uploaded,
                         const std::function<void(uint64_t bytes)>& on_file = nullptr);

// Deletes the object (absent already: OK). `retry` false: one attempt, for
// best-effort cleanups after a failure.
absl::Status DeleteObject(const std::string& url, bool retry = true);

}  // namespace remote
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_UPLOAD_H_
