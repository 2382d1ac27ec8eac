#include "converter/example_encoder.h"

#include <random>

#include "gtest/gtest.h"
#include "proto/example.pb.h"
#include "record/crc32c.h"
#include "record/record_format.h"

namespace shardfeed {
namespace {

TEST(ExampleEncoder, ParsesAsTheSameExampleProtobufWouldBuild) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    ExampleEncoder e;
    Example want;
    std::vector<std::vector<std::string>> storage;  // bytes must outlive Finish
    storage.reserve(8);
    auto& map = *want.mutable_features()->mutable_feature();
    int n = static_cast<int>(rng() % 6);
    for (int f = 0; f < n; ++f) {
      std::string key = "k" + std::to_string(rng() % 10);
      switch (rng() % 3) {
        case 0: {
          storage.emplace_back(rng() % 4);
          std::vector<std::string>& v = storage.back();
          for (auto& s : v) s = std::string(rng() % 300, static_cast<char>(rng()));
          e.AddBytesList(key, v);
          map[key].Clear();
          for (auto& s : v) map[key].mutable_bytes_list()->add_value(s);
          if (v.empty()) map[key].mutable_bytes_list();
          break;
        }
        case 1: {
          std::vector<int64_t> v(rng() % 5);
          for (auto& x : v) x = static_cast<int64_t>(rng());
          e.AddInt64List(key, v);
          map[key].Clear();
          map[key].mutable_int64_list();
          for (auto x : v) map[key].mutable_int64_list()->add_value(x);
          break;
        }
        default: {
          std::vector<float> v(rng() % 5);
          for (auto& x : v) x = static_cast<float>(static_cast<int64_t>(rng() % 2000) - 1000) / 7;
          e.AddFloatList(key, v);
          map[key].Clear();
          map[key].mutable_float_list();
          for (auto x : v) map[key].mutable_float_list()->add_value(x);
          break;
        }
      }
    }
    std::string bytes = e.Finish();
    Example got;
    ASSERT_TRUE(got.ParseFromString(bytes));
    if (n == 0) {
      EXPECT_TRUE(got.has_features());
      continue;
    }
    ASSERT_EQ(want.features().feature_size(), got.features().feature_size());
    for (const auto& [k, f] : want.features().feature()) {
      ASSERT_EQ(f.SerializeAsString(), got.features().feature().at(k).SerializeAsString()) << k;
    }
  }
}

TEST(ExampleEncoder, SameFeaturesSameBytesWhateverTheOrder) {
  ExampleEncoder a, b;
  a.AddInt64("label", 3);
  a.AddBytes("image", "xyz");
  b.AddBytes("image", "xyz");
  b.AddInt64("label", 3);
  EXPECT_EQ(a.Finish(), b.Finish());
}

TEST(Varint, Sizes) {
  EXPECT_EQ(1u, VarintSize(0));
  EXPECT_EQ(1u, VarintSize(127));
  EXPECT_EQ(2u, VarintSize(128));
  EXPECT_EQ(10u, VarintSize(~uint64_t{0}));
  std::string s;
  AppendVarint(&s, 300);
  EXPECT_EQ(std::string("\xac\x02", 2), s);
}

}  // namespace
}  // namespace shardfeed

namespace shardfeed {
namespace {

TEST(ExampleEncoder, FramedIsTheRecordTheWriterWouldWrite) {
  ExampleEncoder a, b;
  const std::string image(3072, 'x');
  a.AddBytes("image", image);
  a.AddInt64("label", 7);
  b.AddBytes("image", image);
  b.AddInt64("label", 7);
  std::string data = a.Finish();
  std::string framed = b.FinishFramed();
  ASSERT_EQ(data.size() + 16, framed.size());
  EXPECT_EQ(data, framed.substr(12, data.size()));
  EXPECT_EQ(data.size(), DecodeFixed64(framed.data()));
  EXPECT_EQ(crc32c::Mask(crc32c::Value(data.data(), data.size())),
            DecodeFixed32(framed.data() + 12 + data.size()));
}

}  // namespace
TEST(ExampleEncoder, FramedSizeIsTheSizeOfTheRecordEvenWithZeroBytes) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t length = rng() % 70000;  // varint lengths of 1, 2 and 3 bytes
    const std::string zeros(length, '\0');
    ExampleEncoder real, sized;
    real.AddBytes("data", zeros);
    sized.AddZeroBytes("data", length);
    const int64_t label = static_cast<int64_t>(rng() % 1000);
    for (ExampleEncoder* e : {&real, &sized}) {
      e->AddBytes("filename", "a/b.wav");
      e->AddInt64("label", label);
    }
    const size_t predicted = sized.FramedSize();
    const std::string framed = sized.FinishFramed();
    EXPECT_EQ(predicted, framed.size());
    EXPECT_EQ(framed, real.FinishFramed());
  }
}

}  // namespace shardfeed
