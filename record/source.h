// RandomAccessSource: the bytes of one file or object, read at any offset.
//
// One reading interface for every place bytes come from: a local file
// (record/file.h's ReadableFile) and a remote object (record/remote/:
// s3://, gs://, https://) are peers behind it, so the record reader, the
// planned loader, the streaming path and check do not know where bytes
// come from. record/storage.h opens one for a path of any kind.
//
// Contract: ReadAt is thread-safe (several threads may read one source);
// it returns exactly n bytes, fewer only at the end of the source, and an
// error as absl::Status naming path() (a remote path never carries
// credentials, so it is safe in messages). size() is fixed at open: a
// remote object replaced after it was opened is an error from ReadAt
// (FAILED_PRECONDITION naming it), never bytes of two versions.
#ifndef SHARDFEED_RECORD_SOURCE_H_
#define SHARDFEED_RECORD_SOURCE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace shardfeed {

class RandomAccessSource {
 public:
  virtual ~RandomAccessSource() = default;
  // Reads up to n bytes at `offset` into dst; fewer only at the end.
  virtual absl::StatusOr<size_t> ReadAt(uint64_t offset, char* dst, size_t n) const = 0;
  virtual uint64_t size() const = 0;
  // The path or URL given to open it (what messages name).
  virtual const std::string& path() const = 0;
  // A local file's path, for callers that map it (the planned loader's
  // fast path); empty for a remote object.
  virtual const std::string& local_path() const = 0;
  // The version every ReadAt reads: a remote object's ETag (what a cache
  // keys its bytes by); empty for a local file.
  virtual std::string version() const { return std::string(); }
  // Bytes [offset, offset + n) read back failed their CRCs or their format.
  // A source serving them from a local copy (a cached extent) drops that
  // copy so the next ReadAt reads them from the origin, and says true; it
  // says so at most once per copy (a second failure is real data loss).
  // False: nothing to read again (a plain file or object).
  virtual absl::StatusOr<bool> RefetchFromOrigin(uint64_t offset, uint64_t n) const {
    (void)offset;
    (void)n;
    return false;
  }
};

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_SOURCE_H_
