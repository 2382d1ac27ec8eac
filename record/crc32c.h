// CRC32C (Castagnoli), as TFRecord uses it, and the masking of stored CRCs.
//
// Value() is hardware-accelerated when the CPU has SSE4.2 (through Intel
// ISA-L's crc32_iscsi, ~15 GB/s) and falls back to a portable
// slicing-by-8 table otherwise; the choice is made once, at run time.
// All functions are thread-safe.
//
// Example:
//   uint32_t stored = crc32c::Mask(crc32c::Value(data, n));
//   bool ok = crc32c::Unmask(stored) == crc32c::Value(data, n);
#ifndef SHARDFEED_RECORD_CRC32C_H_
#define SHARDFEED_RECORD_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace shardfeed::crc32c {

// Returns crc32c(A + data[0, n)) given init_crc = crc32c(A).
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

// Returns crc32c(data[0, n)).
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// crc32c(A + B) from crc_a = crc32c(A), crc_b = crc32c(B) and len_b = |B|
// (as zlib's crc32_combine), without touching the bytes: O(log len_b) small
// GF(2) products, O(1) when len_b repeats (the last operator is cached per
// thread).
uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

// The portable implementation, whatever the CPU (for tests and benchmarks).
uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n);

// "isal-sse4.2", "sse4.2" (builds without ISA-L) or "portable": which
// implementation Extend() uses.
const char* ImplementationName();

// Stored CRCs are masked: computing the CRC of a string that itself contains
// embedded CRCs is problematic, so TFRecord (like LevelDB) stores a rotated,
// offset value instead of the raw CRC.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

inline uint32_t Mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

inline uint32_t Unmask(uint32_t masked_crc) {
  uint32_t rot = masked_crc - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace shardfeed::crc32c

#endif  // SHARDFEED_RECORD_CRC32C_H_
