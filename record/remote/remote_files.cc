#include "record/remote/remote_files.h"

#include <fnmatch.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "record/remote/object_store.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace remote {
namespace {

class RemoteSource : public RandomAccessSource {
 public:
  RemoteSource(std::shared_ptr<ObjectStore> store, RemotePath p, ObjectInfo info)
      : store_(std::move(store)), p_(std::move(p)), info_(std::move(info)),
        name_(DisplayName(p_)) {}
  absl::StatusOr<size_t> ReadAt(uint64_t offset, char* dst, size_t n) const override {
    if (offset >= info_.size || n == 0) return 0;
    n = static_cast<size_t>(std::min<uint64_t>(n, info_.size - offset));
    return store_->ReadRange(p_, info_.etag, offset, n, dst);
  }
  uint64_t size() const override { return info_.size; }
  const std::string& path() const override { return name_; }
  const std::string& local_path() const override { return empty_; }
  std::string version() const override { return info_.etag; }

 private:
  const std::shared_ptr<ObjectStore> store_;
  const RemotePath p_;
  const ObjectInfo info_;
  const std::string name_, empty_;
};

struct Opened {
  RemotePath path;
  std::shared_ptr<ObjectStore> store;
};

absl::StatusOr<Opened> Resolve(const std::string& path) {
  Opened o;
  ASSIGN_OR_RETURN(o.path, ParseRemotePath(path));
  ASSIGN_OR_RETURN(o.store, ObjectStore::For(o.path));
  return o;
}

std::string Prefix(const RemotePath& p) {
  return absl::StrCat(p.scheme == Scheme::kGcs ? "gs://" : "s3://", p.bucket, "/");
}

}  // namespace

absl::StatusOr<std::unique_ptr<RandomAccessSource>> OpenObject(const std::string& path) {
  ASSIGN_OR_RETURN(Opened o, Resolve(path));
  ASSIGN_OR_RETURN(ObjectInfo info, o.store->Head(o.path));
  return std::unique_ptr<RandomAccessSource>(
      new RemoteSource(o.store, std::move(o.path), std::move(info)));
}

absl::StatusOr<std::string> ReadObject(const std::string& path) {
  ASSIGN_OR_RETURN(Opened o, Resolve(path));
  return o.store->ReadAll(o.path);
}

absl::StatusOr<RemoteKind> StatRemote(const std::string& path) {
  ASSIGN_OR_RETURN(Opened o, Resolve(path));
  const std::string& name = o.path.scheme == Scheme::kHttp ? o.path.url : o.path.key;
  if (!name.empty() && name.back() != '/') {
    absl::StatusOr<ObjectInfo> head = o.store->Head(o.path);
    if (head.ok()) return RemoteKind::kObject;
    if (!absl::IsNotFound(head.status())) return head.status();
  }
  if (o.path.scheme == Scheme::kHttp) {
    // A server cannot say whether a URL is a folder: one that ends in '/'
    // is taken for one.
    return absl::EndsWith(o.path.url, "/") ? RemoteKind::kFolder : RemoteKind::kMissing;
  }
  RemotePath folder = o.path;
  if (!folder.key.empty() && folder.key.back() != '/') folder.key.push_back('/');
  ASSIGN_OR_RETURN(ListPage page, o.store->List(folder, /*delimiter=*/true));
  return page.objects.empty() && page.prefixes.empty() ? RemoteKind::kMissing
                                                       : RemoteKind::kFolder;
}

absl::StatusOr<RemoteEntries> ListRemoteDir(const std::string& dir) {
  ASSIGN_OR_RETURN(Opened o, Resolve(dir));
  RemotePath folder = o.path;
  if (!folder.key.empty() && folder.key.back() != '/') folder.key.push_back('/');
  ASSIGN_OR_RETURN(ListPage page, o.store->List(folder, /*delimiter=*/true));
  RemoteEntries out;
  for (const ObjectInfo& obj : page.objects) {
    std::string name = obj.key.substr(folder.key.size());
    if (!name.empty() && name[0] != '.') out.files.push_back(std::move(name));
  }
  for (const std::string& pre : page.prefixes) {
    std::string name = pre.substr(folder.key.size());
    while (!name.empty() && name.back() == '/') name.pop_back();
    if (!name.empty() && name[0] != '.') out.dirs.push_back(std::move(name));
  }
  std::sort(out.files.begin(), out.files.end());
  std::sort(out.dirs.begin(), out.dirs.end());
  return out;
}

absl::StatusOr<std::vector<std::string>> GlobRemote(const std::string& pattern) {
  ASSIGN_OR_RETURN(Opened o, Resolve(pattern));
  RemotePath prefix = o.path;
  prefix.key = o.path.key.substr(0, o.path.key.find_first_of("*?["));
  ASSIGN_OR_RETURN(ListPage page, o.store->List(prefix, /*delimiter=*/false));
  std::vector<std::string> out;
  for (const ObjectInfo& obj : page.objects) {
    if (fnmatch(o.path.key.c_str(), obj.key.c_str(), FNM_PATHNAME) == 0) {
      out.push_back(Prefix(o.path) + obj.key);
    }
  }
  if (out.empty()) return absl::NotFoundError(absl::StrCat("no object matches '", pattern, "'"));
  std::sort(out.begin(), out.end());
  return out;
}

void SetAnonymousAccess(bool anonymous) { SetAnonymous(anonymous); }

RemoteTraffic RemoteTrafficSoFar() {
  HttpCounters& c = HttpClient::Get().counters();
  RemoteTraffic t;
  t.requests = c.requests.load();
  t.retries = c.retries.load();
  t.bytes = c.bytes.load();
  return t;
}

double LastFirstByteSeconds() { return HttpClient::LastFirstByteSeconds(); }

absl::Status WriteObject(const std::string& path, const std::string& contents) {
  ASSIGN_OR_RETURN(Opened o, Resolve(path));
  return o.store->Put(o.path, contents);
}

}  // namespace remote
}  // namespace shardfeed
