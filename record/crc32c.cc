#include "record/crc32c.h"

#include <array>
#include <cstring>

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

#if defined(__x86_64__) && !SHARDFEED_HAVE_ISAL
// The SSE4.2 crc32 instruction, one stream: for builds without ISA-L (the
// static --config=portable binaries); ISA-L's folding code is faster.
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t init_crc, const char* data,
                                                        size_t n) {
  uint64_t c = ~init_crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, data, 8);
    c = __builtin_ia32_crc32di(c, v);
    data += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, static_cast<unsigned char>(*data++));
  return ~c32;
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
#elif defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) return {&ExtendSse42, "sse4.2"};
#endif
  return {&ExtendPortable, "portable"};
}

const Implementation& GetImplementation() {
  static const Implementation impl = Choose();
  return impl;
}

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected Castagnoli

// a * b modulo the polynomial, both in reflected form (x^0 is 1 << 31).
uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

// x^(2^k) mod P for k = 0..63.
std::array<uint32_t, 64> MakePowers() {
  std::array<uint32_t, 64> t{};
  uint32_t p = 1u << 30;  // x^1
  for (int k = 0; k < 64; ++k) {
    t[k] = p;
    p = MultModP(p, p);
  }
  return t;
}

// x^(8 n) mod P.
uint32_t ShiftOperator(uint64_t n) {
  static const std::array<uint32_t, 64> powers = MakePowers();
  uint32_t p = 1u << 31;  // x^0
  int k = 3;              // 8 n = n * 2^3
  while (n != 0) {
    if (n & 1) p = MultModP(powers[k], p);
    n >>= 1;
    ++k;
  }
  return p;
}

}  // namespace

uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  // Multiplying by the operator x^(8 len_b) is linear over GF(2): once a
  // length repeats (fixed-size records), a table per byte of crc_a makes the
  // product four lookups.
  struct Cache {
    uint64_t len = ~uint64_t{0};
    uint32_t op = 0;
    int uses = 0;
    bool has_table = false;
    uint32_t table[4][256];
  };
  thread_local Cache c;
  if (len_b != c.len) {
    c.len = len_b;
    c.op = ShiftOperator(len_b);
    c.uses = 0;
    c.has_table = false;
  }
  if (!c.has_table && ++c.uses > 8) {
    for (int k = 0; k < 4; ++k) {
      for (uint32_t v = 0; v < 256; ++v) c.table[k][v] = MultModP(c.op, v << (8 * k));
    }
    c.has_table = true;
  }
  if (c.has_table) {
    return c.table[0][crc_a & 0xff] ^ c.table[1][(crc_a >> 8) & 0xff] ^
           c.table[2][(crc_a >> 16) & 0xff] ^ c.table[3][crc_a >> 24] ^ crc_b;
  }
  return MultModP(c.op, crc_a) ^ crc_b;
}

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
