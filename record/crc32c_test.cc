#include "record/crc32c.h"

#include <cstring>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace shardfeed::crc32c {
namespace {

// Vectors from RFC 3720 B.4 (also in TensorFlow's crc32c tests), as listed in
// testdata/interop/README.md.
TEST(Crc32c, StandardVectors) {
  char buf[32];
  std::memset(buf, 0, sizeof(buf));
  EXPECT_EQ(0x8a9136aau, Value(buf, sizeof(buf)));
  std::memset(buf, 0xff, sizeof(buf));
  EXPECT_EQ(0x62a8ab43u, Value(buf, sizeof(buf)));
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<char>(i);
  EXPECT_EQ(0x46dd794eu, Value(buf, sizeof(buf)));
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<char>(31 - i);
  EXPECT_EQ(0x113fdb5cu, Value(buf, sizeof(buf)));
  EXPECT_EQ(0xe3069283u, Value("123456789", 9));
}

TEST(Crc32c, PortableMatchesVectors) {
  EXPECT_EQ(0xe3069283u, ExtendPortable(0, "123456789", 9));
  char zeros[32] = {};
  EXPECT_EQ(0x8a9136aau, ExtendPortable(0, zeros, sizeof(zeros)));
}

TEST(Crc32c, Masking) {
  EXPECT_EQ(0xc78ab0e5u, Mask(0xe3069283u));
  EXPECT_EQ(0xa282ead8u, Mask(0));
  uint32_t crc = Value("foo", 3);
  EXPECT_NE(crc, Mask(crc));
  EXPECT_NE(crc, Mask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Unmask(Mask(Mask(crc)))));
}

TEST(Crc32c, ExtendEqualsWhole) {
  EXPECT_EQ(Value("hello world", 11), Extend(Value("hello ", 6), "world", 5));
}

// The selected implementation and the portable one agree on random data of
// every length and alignment around the SIMD block sizes.
TEST(Crc32c, AcceleratedMatchesPortable) {
  std::mt19937 rng(42);
  std::string data(70000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t n : {0, 1, 7, 8, 15, 16, 31, 63, 64, 255, 256, 1023, 4096, 65536}) {
      ASSERT_EQ(ExtendPortable(0, data.data() + offset, n), Value(data.data() + offset, n))
          << "offset " << offset << " n " << n << " impl " << ImplementationName();
      ASSERT_EQ(ExtendPortable(0x1234, data.data() + offset, n),
                Extend(0x1234, data.data() + offset, n));
    }
  }
}

TEST(Crc32c, CombineEqualsTheWholeForEverySplit) {
  std::mt19937 rng(5);
  std::string data(3000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t cut : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{100}, size_t{2999},
                     size_t{3000}}) {
    const uint32_t a = Value(data.data(), cut);
    const uint32_t b = Value(data.data() + cut, data.size() - cut);
    EXPECT_EQ(Value(data.data(), data.size()), Combine(a, b, data.size() - cut)) << cut;
  }
  // The cached operator for a repeated length, then a new length.
  uint32_t whole = 0;
  for (int k = 0; k < 10; ++k) whole = Combine(whole, Value(data.data() + 300 * k, 300), 300);
  EXPECT_EQ(Value(data.data(), data.size()), whole);
  whole = 0;  // 100 pieces of one length: the table-driven path
  for (int k = 0; k < 100; ++k) whole = Combine(whole, Value(data.data() + 30 * k, 30), 30);
  EXPECT_EQ(Value(data.data(), data.size()), whole);
  for (int k = 0; k < 300; ++k) {
    const size_t cut = rng() % data.size();
    ASSERT_EQ(Value(data.data(), data.size()),
              Combine(Value(data.data(), cut), Value(data.data() + cut, data.size() - cut),
                      data.size() - cut));
  }
}

TEST(Crc32c, ReportsImplementation) {
  std::string name = ImplementationName();
  EXPECT_TRUE(name == "isal-sse4.2" || name == "sse4.2" || name == "portable") << name;
}

}  // namespace
}  // namespace shardfeed::crc32c
