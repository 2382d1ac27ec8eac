#include "record/compression.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "record/crc32c.h"
#include "record/record_format.h"

namespace shardfeed {

absl::StatusOr<Compression> ParseCompression(absl::string_view name) {
  std::string n = absl::AsciiStrToLower(name);
  if (n == "auto") return Compression::kAuto;
  if (n == "none" || n.empty()) return Compression::kNone;
  if (n == "zlib") return Compression::kZlib;
  if (n == "gzip") return Compression::kGzip;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown compression '", name, "' (expected none, zlib or gzip)"));
}

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kAuto:
      return "auto";
    case Compression::kNone:
      return "none";
    case Compression::kZlib:
      return "zlib";
    case Compression::kGzip:
      return "gzip";
  }
  return "?";
}

Compression CompressionFromFileName(absl::string_view path) {
  if (absl::EndsWith(path, ".gz")) return Compression::kGzip;
  if (absl::EndsWith(path, ".zlib")) return Compression::kZlib;
  return Compression::kNone;
}

Compression DetectCompression(absl::string_view path, absl::string_view b) {
  if (b.size() >= kRecordHeaderSize) {
    uint32_t want = crc32c::Unmask(DecodeFixed32(b.data() + sizeof(uint64_t)));
    if (crc32c::Value(b.data(), sizeof(uint64_t)) == want) return Compression::kNone;
  }
  if (b.size() >= 2) {
    auto u0 = static_cast<unsigned char>(b[0]);
    auto u1 = static_cast<unsigned char>(b[1]);
    if (u0 == 0x1f && u1 == 0x8b) return Compression::kGzip;
    // zlib: CM = 8 (deflate), CINFO <= 7, and the header is a multiple of 31.
    if ((u0 & 0x0f) == 8 && (u0 >> 4) <= 7 && ((u0 << 8) | u1) % 31 == 0) {
      return Compression::kZlib;
    }
  }
  return CompressionFromFileName(path);
}

}  // namespace shardfeed
