// ExtentSource: one remote shard read through the extent prefetcher
// (reader/extent_prefetcher.h): ReadAt copies from the cached extents that
// cover the range (waiting for their fetch), so the batch filler reads a
// remote shard exactly as a local file, CRCs and all, without knowing where
// the bytes come from. Bytes outside every extent (before the first record)
// are read from the shard's own source.
//
// Threading: as RandomAccessSource (thread-safe). Errors: the prefetcher's
// (naming the object), or the source's.
#ifndef SHARDFEED_READER_EXTENT_SOURCE_H_
#define SHARDFEED_READER_EXTENT_SOURCE_H_

#include <memory>
#include <string>

#include "reader/extent_prefetcher.h"
#include "record/source.h"

namespace shardfeed {

class ExtentSource : public RandomAccessSource {
 public:
  ExtentSource(std::shared_ptr<ExtentPrefetcher> prefetcher, size_t shard,
               std::shared_ptr<RandomAccessSource> source)
      : prefetcher_(std::move(prefetcher)), shard_(shard), source_(std::move(source)) {}

  absl::StatusOr<size_t> ReadAt(uint64_t offset, char* dst, size_t n) const override;
  uint64_t size() const override { return source_->size(); }
  const std::string& path() const override { return source_->path(); }
  const std::string& local_path() const override { return source_->local_path(); }
  std::string version() const override { return source_->version(); }
  // Drops the cached extents under the range (ExtentPrefetcher::Refetch).
  absl::StatusOr<bool> RefetchFromOrigin(uint64_t offset, uint64_t n) const override;

 private:
  const std::shared_ptr<ExtentPrefetcher> prefetcher_;
  const size_t shard_;
  const std::shared_ptr<RandomAccessSource> source_;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_EXTENT_SOURCE_H_
