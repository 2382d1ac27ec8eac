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
// Decoding runs for every record read: on a little-endian host one load
// (GCC kept the byte loop as 8 loads and shifts: ~100 instructions per
// record for the three fields of a header and footer).
inline uint32_t DecodeFixed32(const char* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
#else
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
#endif
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#else
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
#endif
  return v;
}

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_RECORD_FORMAT_H_
