// ExtentCache's non-virtual parts: Reservation, the default folder, Open.
#include "record/cache/extent_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "record/cache/local_extent_cache.h"
#include "record/file.h"
#include "record/status_macros.h"

namespace shardfeed {

ExtentCache::Reservation::Reservation(std::shared_ptr<ExtentCache> cache, uint64_t bytes)
    : cache_(std::move(cache)), bytes_(bytes) {}

ExtentCache::Reservation::Reservation(Reservation&& other) noexcept
    : cache_(std::move(other.cache_)), bytes_(other.bytes_) {
  other.bytes_ = 0;
}

ExtentCache::Reservation& ExtentCache::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    if (cache_ != nullptr && bytes_ > 0) cache_->Unreserve(bytes_);
    cache_ = std::move(other.cache_);
    bytes_ = other.bytes_;
    other.cache_.reset();
    other.bytes_ = 0;
  }
  return *this;
}

ExtentCache::Reservation::~Reservation() {
  if (cache_ != nullptr && bytes_ > 0) cache_->Unreserve(bytes_);
}

std::string DefaultExtentCacheDir() {
  const char* dir = std::getenv("SHARDFEED_CACHE_DIR");
  if (dir != nullptr && *dir != '\0') return dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return absl::StrCat(xdg, "/shardfeed/extents");
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    const struct passwd* pw = ::getpwuid(::getuid());
    home = pw != nullptr ? pw->pw_dir : "/tmp";
  }
  return absl::StrCat(home, "/.cache/shardfeed/extents");
}

absl::StatusOr<std::shared_ptr<ExtentCache>> ExtentCache::Open(const ExtentCacheOptions& options) {
  std::string dir = options.dir.empty() ? DefaultExtentCacheDir() : options.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const uint64_t limit =
      options.limit_bytes == 0 ? kDefaultExtentCacheLimit : options.limit_bytes;
  RETURN_IF_ERROR(MakeDirs(dir));
  ASSIGN_OR_RETURN(std::shared_ptr<LocalExtentCache> cache,
                   LocalExtentCache::Create(std::move(dir), limit));
  return std::shared_ptr<ExtentCache>(std::move(cache));
}

}  // namespace shardfeed
