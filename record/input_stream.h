// Byte streams under the record reader: a source's bytes (a local file or
// a remote object, record/source.h), or a ZLIB/GZIP decompressor over them.
// A remote source is read in large blocks (kRemoteBlockSize: one request
// per block, not per caller's read). Not thread-safe.
#ifndef SHARDFEED_RECORD_INPUT_STREAM_H_
#define SHARDFEED_RECORD_INPUT_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "record/compression.h"
#include "record/source.h"

namespace shardfeed {

class InputStream {
 public:
  virtual ~InputStream() = default;
  // Reads up to n bytes into dst; returns the count (fewer than n only at the
  // end of the stream; 0 means the end). A damaged compressed stream is
  // DATA_LOSS naming the file and the compressed offset.
  virtual absl::StatusOr<size_t> Read(char* dst, size_t n) = 0;
  // Restarts the stream at its beginning.
  virtual absl::Status Rewind() = 0;
  // For an uncompressed file: moves to `offset`. Compressed streams answer
  // UNIMPLEMENTED (callers skip forward by reading instead).
  virtual absl::Status Seek(uint64_t offset) = 0;
  // Bytes of the file consumed so far, for progress (for a compressed
  // stream: up to the compressed data decoded so far).
  virtual uint64_t file_position() const = 0;
};

// Bytes per request when a remote source is read in order.
constexpr size_t kRemoteBlockSize = 8 << 20;

// Opens `source` (owned) as a stream of the given compression (not kAuto).
std::unique_ptr<InputStream> MakeInputStream(std::unique_ptr<RandomAccessSource> source,
                                             Compression compression);

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_INPUT_STREAM_H_
