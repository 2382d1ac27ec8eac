// Datasets written into a bucket (s3://BUCKET/PREFIX/, gs://...): convert,
// merge and the Python writer write their shards into a local staging
// folder (StagingFolder), then publish them here (BucketOutput): every
// shard and index uploaded (record/remote/upload.h: single PUT or
// multipart), manifest.json last, so that a dataset in a bucket is complete
// exactly when its manifest exists.
//
// Refusals are a local output's (converter/output_dir.h): a prefix that
// holds a dataset is replaced only with `overwrite`, and only when
// shardfeed wrote it; files with this run's names that no shardfeed
// manifest lists are refused even with `overwrite`. Replacing: the old
// manifest is deleted before the first upload (the old dataset stops being
// complete: a reader never sees old and new shards under one manifest),
// then the new files go up, then the old objects this run did not rewrite
// are deleted, then the new manifest is written.
//
// A failed upload (of a shard, an index or the manifest itself) leaves no
// manifest, deletes (one attempt each) the objects this run uploaded, and
// returns the upload's error (the object, the redacted URL and the HTTP
// status); only a manifest whose absence cannot be confirmed keeps them.
// A prefix that cannot be checked for a dataset (e.g. no List permission)
// is refused. Not thread-safe.
#ifndef SHARDFEED_CONVERTER_BUCKET_OUTPUT_H_
#define SHARDFEED_CONVERTER_BUCKET_OUTPUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"
#include "record/remote/upload.h"

namespace shardfeed {

// A fresh folder under $TMPDIR (default /tmp), removed with its files on
// destruction. Move-only.
class StagingFolder {
 public:
  static absl::StatusOr<StagingFolder> Create();
  StagingFolder(StagingFolder&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  StagingFolder& operator=(StagingFolder&& o) noexcept {
    std::swap(path_, o.path_);  // o removes what this held
    return *this;
  }
  StagingFolder(const StagingFolder&) = delete;
  ~StagingFolder();
  const std::string& path() const { return path_; }

 private:
  explicit StagingFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

class BucketOutput {
 public:
  struct File {
    std::string local_path;  // the staged file
    std::string name;        // its name under the output prefix
  };

  // Checks `url` (s3:// or gs://; INVALID_ARGUMENT for http(s)) before a
  // run that writes shards named PREFIX-NNNNN-of-NNNNN... for `prefixes`
  // (see the file comment). Reads the upload settings from the environment
  // (record/remote/upload.h).
  static absl::StatusOr<BucketOutput> Prepare(const std::string& url,
                                              const std::vector<std::string>& prefixes,
                                              bool overwrite);

  // Uploads `files`, then `manifest_json` as manifest.json (see the file
  // comment). `on_file` (may be empty): called after each upload with its
  // size, from upload threads. `cancelled` (may be empty): polled before
  // each file and part; true stops with CANCELLED, as a failure does.
  absl::Status Publish(const std::vector<File>& files, const std::string& manifest_json,
                       const std::function<void(uint64_t bytes)>& on_file = nullptr,
                       const std::function<bool()>& cancelled = nullptr) const;

  const std::string& url() const { return url_; }

 private:
  std::string url_;                    // without a trailing '/'
  std::vector<std::string> previous_;  // names of a dataset being replaced
  remote::UploadOptions options_;
};

// The shards and index files of the dataset in local folder `dir` that `m`
// lists.
std::vector<BucketOutput::File> DatasetFiles(const std::string& dir, const Manifest& m);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_BUCKET_OUTPUT_H_
