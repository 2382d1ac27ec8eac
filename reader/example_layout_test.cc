// ExampleLayout / LayoutDecoder: the shared-layout fast path writes exactly
// what the general decoder (DecodeExampleRow) writes, and every record of
// another layout (extra feature, other order, other length or varint width,
// unpacked lists, duplicate keys, defaults, corrupt bytes) falls back to it:
// same rows, same errors. The loader test at the end reads a dataset whose
// layout changes mid-way, shuffled (mapped shards and pread), and a malformed
// record in it is still reported with its file and offset.
#include "reader/example_layout.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "reader/decoder.h"
#include "reader/loader.h"
#include "record/index.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

// Protobuf wire bytes by hand, so that order, packing and duplicates can be
// chosen (ExampleEncoder writes one canonical form).
std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>(v | 0x80));
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Tag(int field, int wire_type) { return Varint(field << 3 | wire_type); }
std::string Len(int field, const std::string& body) {
  return Tag(field, 2) + Varint(body.size()) + body;
}
std::string Entry(const std::string& key, const std::string& feature) {
  return Len(1, Len(1, key) + Len(2, feature));
}
std::string BytesFeature(const std::string& v) { return Len(1, Len(1, v)); }
std::string Int64Packed(std::vector<int64_t> values) {
  std::string packed;
  for (int64_t v : values) packed += Varint(static_cast<uint64_t>(v));
  return Len(3, Len(1, packed));
}
std::string Int64Unpacked(std::vector<int64_t> values) {
  std::string list;
  for (int64_t v : values) list += Tag(1, 0) + Varint(static_cast<uint64_t>(v));
  return Len(3, list);
}
std::string Floats(std::vector<float> values, bool packed) {
  std::string list;
  for (float v : values) {
    std::string bits(4, '\0');
    std::memcpy(&bits[0], &v, 4);
    list += packed ? bits : Tag(1, 5) + bits;
  }
  return Len(2, packed ? Len(1, list) : list);
}
std::string Example(const std::vector<std::string>& entries) {
  std::string body;
  for (const std::string& e : entries) body += e;
  return Len(1, body);
}

std::string Image(int seed, size_t n = 6) { return testing::RandomBytes(n, seed); }

// The usual layout: image, label, vec (packed), in that order.
std::string Usual(int seed, int64_t label) {
  return Example({Entry("image", BytesFeature(Image(seed))), Entry("label", Int64Packed({label})),
                  Entry("vec", Floats({seed * 0.5f, -1.25f}, true))});
}

std::vector<FeatureSpec> Spec(const std::string& text) {
  auto spec = ParseSpec(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

// Decodes `records` in order with one LayoutDecoder and, record by record,
// with DecodeExampleRow into rows pre-filled alike: same status, same bytes.
void ExpectSameAsGeneral(const std::vector<FeatureSpec>& spec,
                         const std::vector<std::string>& records, LayoutDecoder* decoder) {
  for (size_t r = 0; r < records.size(); ++r) {
    SCOPED_TRACE(absl::StrCat("record ", r));
    std::vector<std::string> fast_rows, general_rows;
    std::vector<std::string> fast_var(spec.size()), general_var(spec.size());
    for (const FeatureSpec& f : spec) {
      fast_rows.emplace_back(f.row_bytes(), '\x5a');
      general_rows.emplace_back(f.row_bytes(), '\x5a');
    }
    std::vector<char*> fast_ptr, general_ptr;
    std::vector<std::string*> fast_var_ptr, general_var_ptr;
    for (size_t i = 0; i < spec.size(); ++i) {
      const bool fixed = !spec[i].variable_length;
      fast_ptr.push_back(fixed ? &fast_rows[i][0] : nullptr);
      general_ptr.push_back(fixed ? &general_rows[i][0] : nullptr);
      fast_var_ptr.push_back(fixed ? nullptr : &fast_var[i]);
      general_var_ptr.push_back(fixed ? nullptr : &general_var[i]);
    }
    const DecodeContext context{7, r};
    absl::Status fast = decoder->Decode(records[r], fast_ptr.data(), fast_var_ptr.data(), context);
    absl::Status general =
        DecodeExampleRow(records[r], spec, general_ptr.data(), general_var_ptr.data(), context);
    EXPECT_EQ(general, fast);
    if (!general.ok()) continue;  // rows after an error are unspecified
    EXPECT_EQ(general_rows, fast_rows);
    EXPECT_EQ(general_var, fast_var);
  }
}

TEST(LayoutDecoder, OneSharedLayoutTakesTheFastPathWithTheSameRows) {
  const auto spec = Spec("image:uint8[2,3],label:int64,vec:float32[2]");
  std::vector<std::string> records;
  for (int i = 0; i < 100; ++i) records.push_back(Usual(i, i));  // labels 0..99: one byte
  LayoutDecoder decoder(&spec);
  ExpectSameAsGeneral(spec, records, &decoder);
  EXPECT_EQ(1, decoder.general());  // the first: learned from
  EXPECT_EQ(99, decoder.fast());
}

TEST(LayoutDecoder, AnotherLayoutMidwayFallsBackAndIsLearned) {
  const auto spec = Spec("image:uint8[2,3],label:int64,vec:float32[2]");
  const std::string extra =
      Example({Entry("image", BytesFeature(Image(1))), Entry("label", Int64Packed({1})),
               Entry("note", BytesFeature("free text")), Entry("vec", Floats({1, 2}, true))});
  const std::string reordered =
      Example({Entry("vec", Floats({3, 4}, true)), Entry("label", Int64Packed({2})),
               Entry("image", BytesFeature(Image(2)))});
  std::vector<std::pair<std::string, std::string>> variants = {
      {"an extra feature", extra},
      {"another order", reordered},
      {"a varlen extra feature, another length",
       Example({Entry("image", BytesFeature(Image(3))), Entry("label", Int64Packed({3})),
                Entry("note", BytesFeature("longer free text")),
                Entry("vec", Floats({1, 2}, true))})},
      {"a wider varint", Usual(4, 300)},
      {"a negative label (10-byte varint)", Usual(5, -7)},
      {"an unpacked label",
       Example({Entry("image", BytesFeature(Image(6))), Entry("label", Int64Unpacked({6})),
                Entry("vec", Floats({1, 2}, true))})},
      {"unpacked floats",
       Example({Entry("image", BytesFeature(Image(7))), Entry("label", Int64Packed({7})),
                Entry("vec", Floats({1, 2}, false))})},
      {"a duplicate key (the last wins)",
       Example({Entry("image", BytesFeature(Image(8))), Entry("label", Int64Packed({8})),
                Entry("vec", Floats({1, 2}, true)), Entry("label", Int64Packed({9}))})},
      {"two Features fields (merged)",
       Usual(10, 10) + Example({Entry("extra", Int64Packed({1}))})},
      {"a short image (an error)",
       Example({Entry("image", BytesFeature(Image(11, 5))), Entry("label", Int64Packed({11})),
                Entry("vec", Floats({1, 2}, true))})},
      {"a long image (an error)",
       Example({Entry("image", BytesFeature(Image(12, 7))), Entry("label", Int64Packed({12})),
                Entry("vec", Floats({1, 2}, true))})},
      {"two labels (an error)",
       Example({Entry("image", BytesFeature(Image(13))), Entry("label", Int64Packed({1, 2})),
                Entry("vec", Floats({1, 2}, true))})},
      {"a misspelt key (missing: an error)",
       Example({Entry("imagf", BytesFeature(Image(14))), Entry("label", Int64Packed({14})),
                Entry("vec", Floats({1, 2}, true))})},
      {"label as floats (an error)",
       Example({Entry("image", BytesFeature(Image(15))), Entry("label", Floats({1}, true)),
                Entry("vec", Floats({1, 2}, true))})},
      {"truncated (malformed)", Usual(16, 16).substr(0, Usual(16, 16).size() - 1)},
      {"a continued last varint byte (malformed)",
       [] {
         std::string r = Usual(17, 17);
         // label's varint follows its key and 6 framing bytes.
         r[r.find("label") + 5 + 6] |= '\x80';
         return r;
       }()},
      {"empty", ""},
  };
  for (const auto& [what, variant] : variants) {
    SCOPED_TRACE(what);
    LayoutDecoder decoder(&spec);
    // The usual layout, the variant mid-way (twice: learned from, then
    // matched if it decoded), the usual layout again (learned back).
    ExpectSameAsGeneral(spec,
                        {Usual(20, 20), Usual(21, 21), variant, variant, Usual(22, 22),
                         Usual(23, 23), Usual(24, 24)},
                        &decoder);
    EXPECT_GE(decoder.fast(), 3) << "the usual layout took the fast path";
    EXPECT_GE(decoder.general(), 3) << "the variant fell back";
  }
}

// A minority layout scattered among the records (a wider label in 1 record
// of 10) must not evict the common one; a lasting change of layout (a
// second shard written otherwise) is learned after a few misses. Before the
// hysteresis every minority record relearned twice (64 times at most, then
// the last learned layout stuck, half the time the minority's).
TEST(LayoutDecoder, AMinorityLayoutKeepsTheCommonOneALastingChangeIsLearned) {
  const auto spec = Spec("image:uint8[2,3],label:int64,vec:float32[2]");
  std::vector<std::string> records;
  for (int i = 0; i < 1000; ++i) records.push_back(Usual(i, i % 10 == 5 ? 300 + i : i % 100));
  LayoutDecoder decoder(&spec);
  ExpectSameAsGeneral(spec, records, &decoder);
  EXPECT_EQ(101, decoder.general());  // the first record and the 100 wide labels
  EXPECT_EQ(899, decoder.fast());
  std::vector<std::string> changed;
  for (int i = 0; i < 100; ++i) changed.push_back(Usual(i, 1000 + i));  // 2-byte labels
  ExpectSameAsGeneral(spec, changed, &decoder);
  EXPECT_EQ(101 + LayoutDecoder::kMissesBeforeRelearn, decoder.general());
  EXPECT_EQ(899 + 100 - LayoutDecoder::kMissesBeforeRelearn, decoder.fast());
}

// Records the layout cannot describe (a duplicate key in each) are tried a
// bounded number of times, then left to the general decoder.
TEST(LayoutDecoder, UnlearnableRecordsStopBeingTried) {
  const auto spec = Spec("image:uint8[2,3],label:int64,vec:float32[2]");
  std::vector<std::string> records;
  for (int i = 0; i < 100; ++i) {
    records.push_back(
        Example({Entry("image", BytesFeature(Image(i))), Entry("label", Int64Packed({i})),
                 Entry("label", Int64Packed({i})), Entry("vec", Floats({1, 2}, true))}));
  }
  LayoutDecoder decoder(&spec);
  ExpectSameAsGeneral(spec, records, &decoder);
  EXPECT_EQ(0, decoder.fast());
  EXPECT_EQ(100, decoder.general());
  records.push_back(Usual(1, 1));  // learnable, but the decoder gave up learning
  records.push_back(Usual(2, 2));
  ExpectSameAsGeneral(spec, records, &decoder);
  EXPECT_EQ(0, decoder.fast());
}

TEST(LayoutDecoder, MissingFeatureWithDefaultAndVariableLengthSpecsUseTheGeneralDecoder) {
  const auto with_default = Spec("image:uint8[2,3],label:int64,vec:float32[2],w:float32=2.5");
  LayoutDecoder decoder(&with_default);
  ExpectSameAsGeneral(with_default, {Usual(1, 1), Usual(2, 2), Usual(3, 3)}, &decoder);
  EXPECT_EQ(0, decoder.fast()) << "a default taken is not reproduced by the layout";
  const auto varlen = Spec("image:bytes,label:int64");
  LayoutDecoder varlen_decoder(&varlen);
  ExpectSameAsGeneral(varlen, {Usual(1, 1), Usual(2, 2)}, &varlen_decoder);
  EXPECT_EQ(0, varlen_decoder.fast());
  EXPECT_FALSE(ExampleLayout::SpecSupported(varlen));
}

TEST(ExampleLayout, LearnsOnlyWhatItCanReproduce) {
  const auto spec = Spec("image:uint8[2,3],label:int64,vec:float32[2]");
  auto usual = ExampleLayout::Learn(Usual(1, 1), spec);
  ASSERT_TRUE(usual.has_value());
  EXPECT_EQ(3u, usual->holes());  // image bytes, the label varint, the packed floats
  const std::string duplicate =
      Example({Entry("image", BytesFeature(Image(8))), Entry("label", Int64Packed({8})),
               Entry("vec", Floats({1, 2}, true)), Entry("label", Int64Packed({9}))});
  EXPECT_FALSE(ExampleLayout::Learn(duplicate, spec).has_value());
  EXPECT_FALSE(ExampleLayout::Learn(Usual(1, 1) + Usual(2, 2), spec).has_value());
  // A spec naming a feature twice: the second is missing for the general decoder.
  EXPECT_FALSE(ExampleLayout::Learn(Usual(1, 1), Spec("image:uint8[2,3],label:int64,"
                                                      "vec:float32[2],label:int64"))
                   .has_value());
  // Nothing is written on a mismatch.
  std::string image(6, 'x');
  int64_t label = 42;
  float vec[2] = {0, 0};
  char* rows[3] = {&image[0], reinterpret_cast<char*>(&label), reinterpret_cast<char*>(vec)};
  EXPECT_FALSE(usual->DecodeInto(Usual(2, 300), rows));
  EXPECT_EQ(std::string(6, 'x'), image);
  EXPECT_EQ(42, label);
  EXPECT_TRUE(usual->DecodeInto(Usual(2, 5), rows));
  EXPECT_EQ(Image(2), image);
  EXPECT_EQ(5, label);
  EXPECT_EQ(1.0f, vec[0]);
}

// Records 0..199: the usual layout; 200..299: an extra varlen feature;
// 300..399: label unpacked and first. Record 250's image is one byte short
// (CRCs valid: the decoder must find it). image = Image(i), label = i.
std::string MakeMixedDataset(std::vector<std::string>* shards,
                             std::vector<std::vector<IndexEntry>>* indexes) {
  const std::string dir = testing::MakeTempDir();
  for (int s = 0; s < 2; ++s) {
    const std::string path = absl::StrCat(dir, "/data-", s, ".tfrecord");
    auto w = RecordWriter::Create(path, {});
    EXPECT_TRUE(w.ok());
    for (int i = s * 200; i < (s + 1) * 200; ++i) {
      std::string r;
      if (i < 200) {
        r = Example({Entry("image", BytesFeature(Image(i))), Entry("label", Int64Packed({i}))});
      } else if (i < 300) {
        r = Example({Entry("image", BytesFeature(Image(i, i == 250 ? 5 : 6))),
                     Entry("label", Int64Packed({i})),
                     Entry("note", BytesFeature(std::string(i % 13, 'n')))});
      } else {
        r = Example({Entry("label", Int64Unpacked({i})), Entry("image", BytesFeature(Image(i)))});
      }
      EXPECT_TRUE((*w)->WriteRecord(r).ok());
    }
    EXPECT_TRUE(WriteIndexFile(IndexPathFor(path), (*w)->index()).ok());
    indexes->push_back((*w)->index());
    shards->push_back(path);
    EXPECT_TRUE((*w)->Close().ok());
  }
  return dir;
}

// Calls `each` on every batch of one loader; returns the status that ended
// the reading (OUT_OF_RANGE at the end of the data).
template <typename Each>
absl::Status ReadEveryBatch(const Dataset& ds, const LoaderOptions& o, Each each) {
  auto loader = Loader::Create(ds, o);
  if (!loader.ok()) return loader.status();
  for (;;) {
    absl::StatusOr<Batch> b = (*loader)->Next();
    if (!b.ok()) return b.status();
    each(*b);
  }
}

TEST(LayoutDecoder, LoaderReadsADatasetWhoseLayoutChangesMidway) {
  std::vector<std::string> shards;
  std::vector<std::vector<IndexEntry>> indexes;
  const std::string dir = MakeMixedDataset(&shards, &indexes);
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  for (bool mapped : {true, false}) {  // records decoded in place, or pread into a buffer
    SCOPED_TRACE(mapped ? "mapped" : "pread");
    LoaderOptions o;
    o.features = Spec("image:uint8[2,3],label:int64");
    o.batch_size = 32;
    o.shuffle = true;
    o.seed = 3;
    o.map_shards = mapped;
    // The malformed record: DATA_LOSS naming its shard and offset.
    const absl::Status error = ReadEveryBatch(*ds, o, [](const Batch&) {});
    ASSERT_EQ(absl::StatusCode::kDataLoss, error.code()) << error;
    EXPECT_NE(std::string::npos,
              error.message().find(absl::StrCat(shards[1], ":", indexes[1][50].offset, ": ")))
        << error;
    EXPECT_NE(std::string::npos, error.message().find("feature 'image': is 5 bytes, expected 6"))
        << error;
    // Skipped: every other record once, with its own values.
    o.skip_corrupt = true;
    std::set<int64_t> seen;
    const absl::Status read = ReadEveryBatch(*ds, o, [&](const Batch& b) {
      const int64_t* labels = static_cast<const int64_t*>(b.Find("label")->data);
      const char* images = static_cast<const char*>(b.Find("image")->data);
      for (int64_t r = 0; r < b.size(); ++r) {
        const int64_t i = labels[r];
        EXPECT_TRUE(seen.insert(i).second) << i;
        EXPECT_EQ(Image(static_cast<int>(i)), std::string(images + 6 * r, 6)) << "record " << i;
      }
    });
    EXPECT_TRUE(absl::IsOutOfRange(read)) << read;
    EXPECT_EQ(399u, seen.size());
    EXPECT_EQ(0u, seen.count(250));
  }
}

}  // namespace
}  // namespace shardfeed
