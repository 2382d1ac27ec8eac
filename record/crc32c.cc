#include "record/crc32c.h"

#include <array>

#if SHARDFEED_HAVE_ISAL
#include <isa-l/crc.h>
#endif

namespace shardfeed::crc32c {
namespace {

// Slicing-by-8 tables for the reflected Castagnoli polynomial.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

const Tables& GetTables() {
  static const Tables tables = MakeTables();
  return tables;
}

using ExtendFn = uint32_t (*)(uint32_t, const char*, size_t);

#if SHARDFEED_HAVE_ISAL
uint32_t ExtendIsal(uint32_t init_crc, const char* data, size_t n) {
  // crc32_iscsi takes and returns the un-inverted register.
  return ~crc32_iscsi(reinterpret_cast<unsigned char*>(const_cast<char*>(data)),
                      static_cast<int>(n), ~init_crc);
}

uint32_t ExtendIsalLarge(uint32_t init_crc, const char* data, size_t n) {
  // crc32_iscsi takes an int length; feed huge buffers in pieces.
  constexpr size_t kChunk = size_t{1} << 30;
  while (n > kChunk) {
    init_crc = ExtendIsal(init_crc, data, kChunk);
    data += kChunk;
    n -= kChunk;
  }
  return ExtendIsal(init_crc, data, n);
}
#endif

struct Implementation {
  ExtendFn fn;
  const char* name;
};

Implementation Choose() {
#if SHARDFEED_HAVE_ISAL && defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) return {&ExtendIsalLarge, "isal-sse4.2"};
#endif
  return {&ExtendPortable, "portable"};
}

const Implementation& GetImplementation() {
  static const Implementation impl = Choose();
  return impl;
}

}  // namespace

uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n) {
  const Tables& t = GetTables();
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint32_t c = ~init_crc;
  while (n >= 8) {
    uint32_t lo = c ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 |
                       uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
        t[4][lo >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return ~c;
}

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  return GetImplementation().fn(init_crc, data, n);
}

const char* ImplementationName() { return GetImplementation().name; }

}  // namespace shardfeed::crc32c
