// Whole-stream compression of TFRecord files, as TensorFlow writes them:
// NONE, ZLIB (zlib-wrapped deflate) or GZIP (gzip-wrapped deflate).
#ifndef SHARDFEED_RECORD_COMPRESSION_H_
#define SHARDFEED_RECORD_COMPRESSION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

enum class Compression { kAuto, kNone, kZlib, kGzip };

// "auto", "none", "zlib", "gzip" (case-insensitive; "" means none, as in
// TensorFlow's compression_type="").
absl::StatusOr<Compression> ParseCompression(absl::string_view name);
const char* CompressionName(Compression c);

// The compression implied by the file name: ".gz" → GZIP, ".zlib" → ZLIB,
// otherwise NONE.
Compression CompressionFromFileName(absl::string_view path);

// Decides the compression of a file from its first bytes (up to 12 are
// used). A valid TFRecord header (its length CRC matches) means NONE, even if
// the bytes happen to look like a zlib header; then the gzip magic (1f 8b)
// means GZIP and a valid zlib header means ZLIB; when the bytes decide
// nothing (empty file, garbage), the file name decides.
Compression DetectCompression(absl::string_view path, absl::string_view first_bytes);

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_COMPRESSION_H_
