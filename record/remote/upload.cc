#include "record/remote/upload.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "record/remote/list_xml.h"
#include "record/remote/object_store.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace remote {
namespace {

// "16777216", "16MiB", "5 MiB", "1GiB" -> bytes (binary units only: part
// sizes are spoken of in MiB).
absl::StatusOr<uint64_t> ParseSize(const char* name, absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  uint64_t unit = 1;
  for (const auto& [suffix, factor] :
       {std::pair<const char*, uint64_t>{"KiB", 1ull << 10}, {"MiB", 1ull << 20},
        {"GiB", 1ull << 30}, {"B", 1}}) {
    if (absl::EndsWithIgnoreCase(s, suffix)) {
      s = absl::StripAsciiWhitespace(s.substr(0, s.size() - std::strlen(suffix)));
      unit = factor;
      break;
    }
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(s, &n) || n > (~0ull) / unit) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, "='", text, "' is not a size (bytes, or with KiB, MiB, GiB)"));
  }
  return n * unit;
}

// The text of the first <tag>...</tag> in an XML answer, or "".
std::string XmlElement(absl::string_view xml, absl::string_view tag) {
  const std::string open = absl::StrCat("<", tag, ">"), close = absl::StrCat("</", tag, ">");
  const size_t a = xml.find(open);
  if (a == absl::string_view::npos) return "";
  const size_t b = xml.find(close, a);
  if (b == absl::string_view::npos) return "";
  return XmlUnescape(xml.substr(a + open.size(), b - a - open.size()));
}

std::string XmlEscape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// A local file open for reading (closed on destruction).
struct LocalFile {
  int fd = -1;
  uint64_t size = 0;
  ~LocalFile() {
    if (fd >= 0) ::close(fd);
  }
};

absl::Status OpenLocal(const std::string& path, LocalFile* f) {
  f->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (f->fd < 0 || ::fstat(f->fd, &st) != 0) {
    const int e = errno;
    const std::string what = absl::StrCat(path, ": cannot read the file to upload: ", std::strerror(e));
    return e == ENOENT ? absl::NotFoundError(what) : absl::PermissionDeniedError(what);
  }
  f->size = static_cast<uint64_t>(st.st_size);
  return absl::OkStatus();
}

// Bytes [offset, offset + n) of the file.
absl::StatusOr<std::string> ReadPart(const LocalFile& f, const std::string& path, uint64_t offset,
                                     size_t n) {
  std::string buffer(n, '\0');
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(f.fd, &buffer[done], n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      return absl::DataLossError(absl::StrCat(path, ": read failed at offset ", offset + done,
                                              r == 0 ? ": the file shrank while uploading"
                                                     : absl::StrCat(": ", std::strerror(errno))));
    }
    done += static_cast<size_t>(r);
  }
  return buffer;
}

absl::Status Interrupted(const UploadOptions& o) {
  return o.cancelled && o.cancelled() ? absl::CancelledError("interrupted") : absl::OkStatus();
}

absl::Status MultipartUpload(ObjectStore& store, const RemotePath& p, const LocalFile& file,
                             const std::string& local_path, uint64_t part_size,
                             const UploadOptions& options) {
  // Enough bytes per part to stay within kMaxParts.
  part_size = std::max(part_size, (file.size + kMaxParts - 1) / kMaxParts);
  ASSIGN_OR_RETURN(HttpResponse created, store.Send("POST", p, "uploads=", ""));
  const std::string upload_id = XmlElement(created.body, "UploadId");
  if (upload_id.empty()) {
    return absl::DataLossError(absl::StrCat(
        DisplayName(p), ": CreateMultipartUpload answered without an UploadId"));
  }
  const std::string id_query = CanonicalQuery({{"uploadId", upload_id}});
  // Any failure from here on: the parts sent so far are dropped.
  absl::Cleanup abort = [&] { (void)store.Send("DELETE", p, id_query, ""); };
  std::string complete = "<CompleteMultipartUpload>";
  int part = 1;
  for (uint64_t offset = 0; offset < file.size; offset += part_size, ++part) {
    RETURN_IF_ERROR(Interrupted(options));
    const size_t n = static_cast<size_t>(std::min(part_size, file.size - offset));
    ASSIGN_OR_RETURN(std::string body, ReadPart(file, local_path, offset, n));
    ASSIGN_OR_RETURN(HttpResponse sent,
                     store.Send("PUT", p,
                                CanonicalQuery({{"partNumber", std::to_string(part)},
                                                {"uploadId", upload_id}}),
                                body));
    const std::string etag = sent.Header("etag");
    if (etag.empty()) {
      return absl::DataLossError(
          absl::StrCat(DisplayName(p), ": part ", part, " was answered without an ETag"));
    }
    absl::StrAppend(&complete, "<Part><PartNumber>", part, "</PartNumber><ETag>",
                    XmlEscape(etag), "</ETag></Part>");
  }
  complete += "</CompleteMultipartUpload>";
  ASSIGN_OR_RETURN(HttpResponse done, store.Send("POST", p, id_query, complete));
  // S3 may answer 200 and report a failure in the body.
  if (done.body.find("<Error>") != std::string::npos) {
    return HttpStatusError(500, DisplayName(p), done.body, done.attempts);
  }
  std::move(abort).Cancel();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UploadOptions> UploadOptions::FromEnvironment() {
  UploadOptions o;
  if (const char* v = std::getenv("SHARDFEED_UPLOAD_THRESHOLD"); v != nullptr && *v != '\0') {
    ASSIGN_OR_RETURN(o.multipart_threshold, ParseSize("SHARDFEED_UPLOAD_THRESHOLD", v));
    if (o.multipart_threshold > kMaxSinglePut) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SHARDFEED_UPLOAD_THRESHOLD=", v, ": at most 5 GiB (S3's limit for one PUT)"));
    }
  }
  if (const char* v = std::getenv("SHARDFEED_UPLOAD_PART_SIZE"); v != nullptr && *v != '\0') {
    ASSIGN_OR_RETURN(o.part_size, ParseSize("SHARDFEED_UPLOAD_PART_SIZE", v));
    if (o.part_size < kMinPartSize || o.part_size > kMaxSinglePut) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SHARDFEED_UPLOAD_PART_SIZE=", v,
          ": between 5 MiB and 5 GiB (S3's limits for the parts of an upload)"));
    }
  }
  if (const char* v = std::getenv("SHARDFEED_UPLOAD_THREADS"); v != nullptr && *v != '\0') {
    if (!absl::SimpleAtoi(v, &o.threads) || o.threads < 1 || o.threads > 64) {
      return absl::InvalidArgumentError(
          absl::StrCat("SHARDFEED_UPLOAD_THREADS='", v, "': a number from 1 to 64"));
    }
  }
  return o;
}

absl::Status UploadFile(const std::string& local_path, const std::string& url,
                        const UploadOptions& options) {
  ASSIGN_OR_RETURN(RemotePath p, ParseRemotePath(url));
  if (p.scheme == Scheme::kHttp) {
    return absl::InvalidArgumentError(absl::StrCat(
        RedactUrl(url), ": only s3:// and gs:// outputs can be written, not http(s)"));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, ObjectStore::For(p));
  LocalFile file;
  RETURN_IF_ERROR(OpenLocal(local_path, &file));
  if (file.size > std::min(options.multipart_threshold, kMaxSinglePut)) {
    return MultipartUpload(*store, p, file, local_path, std::max(options.part_size, kMinPartSize),
                           options);
  }
  ASSIGN_OR_RETURN(std::string body,
                   ReadPart(file, local_path, 0, static_cast<size_t>(file.size)));
  return store->Put(p, body);
}

absl::Status UploadFiles(const std::vector<UploadItem>& items, const UploadOptions& options,
                         std::vector<std::string>* uploaded,
                         const std::function<void(uint64_t bytes)>& on_file) {
  std::mutex mu;
  std::condition_variable finished;
  absl::Status first;  // guarded by mu
  int running = 0;     // guarded by mu
  std::atomic<bool> stop{false};
  std::atomic<size_t> next{0};
  // Workers poll `stop`; the caller's `cancelled` is polled on the calling
  // thread only (Python runs signal handlers on its main thread).
  UploadOptions worker_options = options;
  worker_options.cancelled = [&stop] { return stop.load(); };
  auto work = [&] {
    for (size_t i; !stop.load() && (i = next++) < items.size();) {
      absl::Status s = UploadFile(items[i].local_path, items[i].url, worker_options);
      std::lock_guard<std::mutex> lock(mu);
      if (!s.ok()) {
        if (first.ok()) first = s;
        stop = true;
        continue;
      }
      if (uploaded != nullptr) uploaded->push_back(items[i].url);
      if (on_file) {
        struct stat st;
        on_file(::stat(items[i].local_path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size)
                                                              : 0);
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    --running;
    finished.notify_all();
  };
  const int threads = static_cast<int>(
      std::min<size_t>(std::max(1, options.threads), std::max<size_t>(1, items.size())));
  std::vector<std::thread> pool;
  {
    std::unique_lock<std::mutex> lock(mu);
    running = threads;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    while (running > 0) {
      finished.wait_for(lock, std::chrono::milliseconds(50));
      if (!stop.load() && options.cancelled) {
        lock.unlock();
        const bool cancel = options.cancelled();
        lock.lock();
        if (cancel) {
          if (first.ok()) first = absl::CancelledError("interrupted");
          stop = true;
        }
      }
    }
  }
  for (std::thread& t : pool) t.join();
  return first;
}

absl::Status DeleteObject(const std::string& url, bool retry) {
  ASSIGN_OR_RETURN(RemotePath p, ParseRemotePath(url));
  ASSIGN_OR_RETURN(std::shared_ptr<ObjectStore> store, ObjectStore::For(p));
  absl::Status s = store->Send("DELETE", p, "", "", retry).status();
  return absl::IsNotFound(s) ? absl::OkStatus() : s;
}

}  // namespace remote
}  // namespace shardfeed
