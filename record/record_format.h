// The TFRecord byte layout, shared by the reader, the writer and the checker.
//
// A TFRecord file (before optional whole-stream ZLIB/GZIP compression) is a
// sequence of records, each framed as:
//
//   +-------------------+-------------------+-----------------+-------------------+
//   | length            | masked_crc32c     | data            | masked_crc32c     |
//   | uint64 LE, 8 B    | of length, 4 B LE | `length` bytes  | of data, 4 B LE   |
//   +-------------------+-------------------+-----------------+-------------------+
//   |<------------- header, 12 B ---------->|                 |<-- footer, 4 B -->|
//
// An empty record is therefore exactly 16 bytes. There is no file header or
// trailer: end of file is only legal at a record boundary.
#ifndef SHARDFEED_RECORD_RECORD_FORMAT_H_
#define SHARDFEED_RECORD_RECORD_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace shardfeed {

inline constexpr size_t kRecordHeaderSize = sizeof(uint64_t) + sizeof(uint32_t);
inline constexpr size_t kRecordFooterSize = sizeof(uint32_t);
inline constexpr size_t kRecordOverhead = kRecordHeaderSize + kRecordFooterSize;

// Little-endian fixed-width helpers (x86-64 and aarch64 are little-endian;
// the byte-wise form keeps the code endian-neutral).
inline void EncodeFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline void EncodeFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_RECORD_FORMAT_H_
