#include "converter/bucket_output.h"

#include <stdlib.h>

#include <cerrno>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/output_dir.h"
#include "converter/task_part.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/file_list.h"
#include "record/shard_name.h"
#include "record/status_macros.h"

namespace shardfeed {

absl::StatusOr<StagingFolder> StagingFolder::Create() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/shardfeed-upload-XXXXXX");
  if (::mkdtemp(&pattern[0]) == nullptr) {
    return IoError("cannot create a staging folder for the upload", pattern, errno);
  }
  return StagingFolder(std::move(pattern));
}

StagingFolder::~StagingFolder() {
  if (!path_.empty()) (void)RemoveFolder(path_);
}

absl::StatusOr<BucketOutput> BucketOutput::Prepare(const std::string& url,
                                                   const std::vector<std::string>& prefixes,
                                                   bool overwrite) {
  if (!absl::StartsWithIgnoreCase(url, "s3://") && !absl::StartsWithIgnoreCase(url, "gs://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--output ", url, ": datasets can be written to s3:// and gs:// buckets, not over "
                          "http(s)"));
  }
  BucketOutput out;
  out.url_ = StripTrailingSlashes(url);
  ASSIGN_OR_RETURN(out.options_, remote::UploadOptions::FromEnvironment());
  ASSIGN_OR_RETURN(out.previous_, PreviousDatasetToReplace(out.url_, prefixes, overwrite));
  return out;
}

absl::Status BucketOutput::Publish(const std::vector<File>& files,
                                   const std::string& manifest_json,
                                   const std::function<void(uint64_t)>& on_file,
                                   const std::function<bool()>& cancelled) const {
  const std::string manifest_url = absl::StrCat(url_, "/manifest.json");
  if (!previous_.empty()) RETURN_IF_ERROR(remote::DeleteObject(manifest_url));
  std::vector<remote::UploadItem> items;
  std::set<std::string> names;
  for (const File& f : files) {
    items.push_back({f.local_path, absl::StrCat(url_, "/", f.name)});
    names.insert(f.name);
  }
  std::vector<std::string> uploaded;
  remote::UploadOptions options = options_;
  options.cancelled = cancelled;
  absl::Status s = remote::UploadFiles(items, options, &uploaded, on_file);
  // Interrupted after the last upload: still no manifest.
  if (s.ok() && cancelled && cancelled()) {
    s = absl::CancelledError("interrupted: no manifest written");
  }
  for (const std::string& f : previous_) {
    if (!s.ok()) break;
    if (f != "manifest.json" && !names.count(f)) {
      s = remote::DeleteObject(absl::StrCat(url_, "/", f));
    }
  }
  if (s.ok()) {
    // Last: from now on the dataset is complete.
    s = WriteFileAtomically(manifest_url, manifest_json, /*overwrite=*/true);
    if (s.ok()) return s;
    // Its answer may have been lost after the object was stored: the
    // shards are taken away only once the manifest is surely absent (a
    // manifest never names missing shards).
    if (!remote::DeleteObject(manifest_url, /*retry=*/false).ok()) {
      return absl::Status(s.code(), absl::StrCat(s.message(), " (the manifest may exist: the ",
                                                 uploaded.size(), " uploaded object(s) were left)"));
    }
  }
  // Nothing of a dataset without a manifest is of use, and its objects would
  // make the next run refuse the prefix: take them away again (one attempt
  // each: the server may be the reason for the failure).
  int left = 0;
  for (const std::string& u : uploaded) {
    left += remote::DeleteObject(u, /*retry=*/false).ok() ? 0 : 1;
  }
  if (left == 0) return s;
  return absl::Status(s.code(), absl::StrCat(s.message(), " (no manifest was written; ", left,
                                             " uploaded object(s) could not be removed)"));
}

std::vector<BucketOutput::File> DatasetFiles(const std::string& dir, const Manifest& m) {
  std::vector<BucketOutput::File> files;
  for (const ShardInfo& sh : m.shards()) {
    files.push_back({absl::StrCat(dir, "/", sh.file()), sh.file()});
    if (!sh.index_file().empty()) {
      files.push_back({absl::StrCat(dir, "/", sh.index_file()), sh.index_file()});
    }
  }
  return files;
}

}  // namespace shardfeed
