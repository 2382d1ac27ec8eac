// Loader: no silent wrong values and no silent omissions. The default
// features are every feature of the manifest (variable-length number lists
// ragged, optional features with a note), float64 tensors arrive exactly, a
// feature name the dataset does not have is refused at Create() naming the
// closest one (manifest or sampled record), and with skip_corrupt an epoch in
// which every record was skipped is DATA_LOSS, never an epoch of empty
// batches.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "converter/dataset_writer.h"
#include "converter/example_encoder.h"
#include "converter/schema_fold.h"
#include "converter/source.h"
#include "gtest/gtest.h"
#include "reader/feature_names.h"
#include "reader/loader.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

constexpr int kRecords = 40;

// The float64 values of record i: a subnormal, the smallest and largest
// normal doubles, and values float32 would round.
std::vector<double> DoublesOf(int i) {
  return {1e-300 * (i + 1), std::numeric_limits<double>::denorm_min() * (i + 1),
          1e300 / (i + 1), 0.1 + i, -std::numeric_limits<double>::max()};
}

// A dataset as the Python Writer makes it: id, tokens = [0, i % 7) (a
// variable-length int64 list), w = i / 4 (float) in every other record
// (optional), score = DoublesOf(i) (float64 [5], raw bytes), ragged =
// i % 3 doubles (float64 of varying length).
std::string MakeWriterDataset() {
  const std::string dir = testing::MakeTempDir() + "/ds";
  DatasetWriterOptions o;
  o.output_dir = dir;
  o.shard_size = 600;  // several shards
  auto w = DatasetWriter::Create(o);
  EXPECT_TRUE(w.ok()) << w.status();
  std::vector<FeatureSchema> schema;
  for (int i = 0; i < kRecords; ++i) {
    ExampleEncoder e;
    std::vector<FeatureSchema> seen;
    e.AddInt64("id", i);
    seen.push_back(MakeFeature("id", "int64", 1, ""));
    std::vector<int64_t> tokens;
    for (int k = 0; k < i % 7; ++k) tokens.push_back(k);
    e.AddInt64List("tokens", tokens);
    seen.push_back(MakeFeature("tokens", "int64", static_cast<int64_t>(tokens.size()), ""));
    if (i % 2 == 0) {
      const float wv[1] = {i / 4.0f};
      e.AddFloatList("w", wv);
      seen.push_back(MakeFeature("w", "float", 1, ""));
    }
    const std::vector<double> score = DoublesOf(i);
    const std::string score_bytes(reinterpret_cast<const char*>(score.data()), score.size() * 8);
    e.AddBytes("score", score_bytes);
    seen.push_back(MakeFeature("score", "bytes", 1, "", "float64", {5}));
    const std::string ragged_bytes = score_bytes.substr(0, (i % 3) * 8);
    e.AddBytes("ragged", ragged_bytes);
    seen.push_back(MakeFeature("ragged", "bytes", 1, "", "float64", {i % 3}));
    EXPECT_TRUE(FoldSchema(&schema, seen, i == 0).ok());
    EXPECT_TRUE((*w)->Write(e.FinishUnframed()).ok());
  }
  EXPECT_TRUE((*w)->Close(schema).ok());
  return dir;
}

// A folder with one shard (no index, no manifest) of `n` records made by
// make(i, encoder).
std::string WriteShard(int n, const std::function<void(int, ExampleEncoder*)>& make) {
  const std::string dir = testing::MakeTempDir();
  auto w = RecordWriter::Create(dir + "/data.tfrecord", {});
  EXPECT_TRUE(w.ok()) << w.status();
  for (int i = 0; i < n; ++i) {
    ExampleEncoder e;
    make(i, &e);
    EXPECT_TRUE((*w)->WriteRecord(e.Finish()).ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
  return dir;
}

absl::StatusOr<std::unique_ptr<Loader>> Open(const std::string& path, LoaderOptions o) {
  auto ds = Dataset::Open({path});
  if (!ds.ok()) return ds.status();
  return Loader::Create(*std::move(ds), o);
}

template <typename T>
const T* Data(const Batch& b, const std::string& name) {
  const Tensor* t = b.Find(name);
  EXPECT_NE(nullptr, t) << name;
  return t == nullptr ? nullptr : static_cast<const T*>(t->data);
}

// Was: tokens (variable-length numbers) silently missing from the default
// features, float64 delivered as float32 (1e-300 -> 0).
TEST(LoaderValues, DefaultFeaturesAreEveryFeatureAndValuesAreExact) {
  const std::string dir = MakeWriterDataset();
  LoaderOptions o;
  o.batch_size = 16;
  o.shuffle = false;
  auto loader = Open(dir, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  EXPECT_EQ("id:int64;tokens:int64[];w:float32[]=0;score:float64[5];ragged:float64[]",
            SpecToString((*loader)->features()));
  // The optional feature is said, not silently reshaped.
  ASSERT_EQ(1u, (*loader)->notes().size());
  EXPECT_NE(std::string::npos, (*loader)->notes()[0].find("feature 'w' is missing from some"))
      << (*loader)->notes()[0];
  int seen = 0;
  for (;;) {
    auto b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    const Tensor* tokens = b->Find("tokens");
    ASSERT_NE(nullptr, tokens);
    EXPECT_EQ(DType::kInt64, tokens->dtype);
    EXPECT_EQ(DType::kFloat64, b->Find("score")->dtype);
    EXPECT_EQ((std::vector<int64_t>{b->size(), 5}), b->Find("score")->shape);
    const auto* ids = Data<int64_t>(*b, "id");
    const auto* tok = Data<int64_t>(*b, "tokens");
    const auto* tok_off = Data<int64_t>(*b, "tokens/offsets");
    const auto* w = Data<float>(*b, "w");
    const auto* w_off = Data<int64_t>(*b, "w/offsets");
    const auto* score = Data<double>(*b, "score");
    const auto* ragged = Data<double>(*b, "ragged");
    const auto* ragged_off = Data<int64_t>(*b, "ragged/offsets");
    EXPECT_EQ(tok_off[b->size()], tokens->shape[0]);
    for (int64_t r = 0; r < b->size(); ++r, ++seen) {
      const int64_t i = ids[r];
      ASSERT_EQ(i % 7, tok_off[r + 1] - tok_off[r]) << i;
      for (int64_t k = 0; k < i % 7; ++k) EXPECT_EQ(k, tok[tok_off[r] + k]);
      ASSERT_EQ(i % 2 == 0 ? 1 : 0, w_off[r + 1] - w_off[r]) << i;
      if (i % 2 == 0) {
        EXPECT_EQ(i / 4.0f, w[w_off[r]]);
      }
      const std::vector<double> want = DoublesOf(static_cast<int>(i));
      EXPECT_EQ(0, std::memcmp(want.data(), score + r * 5, 40)) << "record " << i;
      ASSERT_EQ(i % 3, ragged_off[r + 1] - ragged_off[r]);
      EXPECT_EQ(0, std::memcmp(want.data(), ragged + ragged_off[r], (i % 3) * 8));
    }
  }
  EXPECT_EQ(kRecords, seen);
}

// Was: "tokens:int64[]" parsed as a scalar, then DATA_LOSS at the first batch.
TEST(LoaderValues, EmptyBracketsAreVariableLengthAndDecodePadsWhenAsked) {
  const std::string dir = MakeWriterDataset();
  LoaderOptions o;
  o.batch_size = kRecords;
  o.shuffle = false;
  o.features = *ParseSpec("id:int64,tokens:int64[]");
  auto loader = Open(dir, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  auto b = (*loader)->Next();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(3, Data<int64_t>(*b, "tokens/offsets")[4] - Data<int64_t>(*b, "tokens/offsets")[3]);
  o.features.clear();  // the default spec, then padded by a decode spec
  o.decode = {{"tokens", "int64,length=4,pad=-1"}};
  loader = Open(dir, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  b = (*loader)->Next();
  ASSERT_TRUE(b.ok()) << b.status();
  const auto* padded = Data<int64_t>(*b, "tokens");
  EXPECT_EQ((std::vector<int64_t>{0, 1, -1, -1}), std::vector<int64_t>(padded + 8, padded + 12));
  EXPECT_EQ(2, Data<int64_t>(*b, "tokens/length")[2]);
}

// Was: accepted, then DATA_LOSS "missing from the record" at the first batch;
// with skip_corrupt an epoch of 0 rows and no error.
TEST(LoaderValues, UnknownFeatureIsRefusedAtCreateNamingTheClosest) {
  const std::string dir = MakeWriterDataset();
  for (bool skip : {false, true}) {
    LoaderOptions o;
    o.skip_corrupt = skip;
    o.features = *ParseSpec("id:int64,tokenz:int64[]");
    auto loader = Open(dir, o);
    ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code()) << loader.status();
    const std::string m(loader.status().message());
    EXPECT_NE(std::string::npos, m.find("feature 'tokenz' is not in the dataset")) << m;
    EXPECT_NE(std::string::npos, m.find("'ragged', 'score', 'tokens', 'w'")) << m;
    EXPECT_NE(std::string::npos, m.find("did you mean 'tokens'?")) << m;
  }
  // A wrong kind or count is a spec error too, not corrupt records.
  LoaderOptions o;
  o.features = *ParseSpec("id:float32");
  auto loader = Open(dir, o);
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code());
  EXPECT_NE(std::string::npos, loader.status().message().find("the manifest says it is int64"))
      << loader.status();
  o.features = *ParseSpec("id:int64[2]");
  loader = Open(dir, o);
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code());
  EXPECT_NE(std::string::npos, loader.status().message().find("every record has 1"))
      << loader.status();
  o.features.clear();
  o.decode = {{"imgae", "image,resize=8"}};
  loader = Open(dir, o);
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code());
}

// Shards without a manifest: the names come from a sampled record.
TEST(LoaderValues, WithoutAManifestTheFirstRecordNamesTheFeatures) {
  const std::string dir = WriteShard(8, [](int i, ExampleEncoder* e) {
    e->AddInt64("label", i);
    e->AddBytes("image", "abc");
  });
  LoaderOptions o;
  o.features = *ParseSpec("imgae:bytes,label:int64");
  auto loader = Open(dir, o);
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code()) << loader.status();
  EXPECT_NE(std::string::npos, loader.status().message().find("did you mean 'image'?"))
      << loader.status();
  EXPECT_NE(std::string::npos, loader.status().message().find("the first record of"))
      << loader.status();
  // A feature with a default may be optional: absent from the sample is fine.
  o.features = *ParseSpec("image:bytes,label:int64,weight:float32=1");
  loader = Open(dir, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  auto b = (*loader)->Next();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(1.0f, Data<float>(*b, "weight")[0]);
}

// Was: with skip_corrupt, an epoch in which every record failed ended with
// 0 rows and no error.
TEST(LoaderValues, AnEpochThatSkipsEveryRecordIsDataLoss) {
  const std::string dir = WriteShard(20, [](int i, ExampleEncoder* e) {
    e->AddInt64("id", i);
    e->AddBytes("image", i == 0 ? "abcd" : "abc");  // 4 bytes only in the sampled record
  });
  LoaderOptions o;
  o.skip_corrupt = true;
  o.shuffle = false;
  o.batch_size = 8;
  o.epochs = 2;
  o.features = *ParseSpec("id:int64,image:uint8[4]");
  // Record 0 is good: the epoch delivers it and the rest are skipped.
  auto loader = Open(dir, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  int64_t rows = 0;
  for (;;) {
    auto b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    rows += b->size();
  }
  EXPECT_EQ(2, rows);
  // Rank 1 of 2 does not read record 0: every record it reads is skipped.
  o.world_size = 2;
  o.rank = 1;
  loader = Open(dir, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  absl::Status end;
  for (int calls = 0; calls < 10 && end.ok(); ++calls) {
    auto b = (*loader)->Next();
    if (!b.ok()) end = b.status();
    if (b.ok()) {
      EXPECT_EQ(0, b->size());
    }
  }
  ASSERT_EQ(absl::StatusCode::kDataLoss, end.code()) << end;
  EXPECT_NE(std::string::npos, end.message().find("epoch 0: every record was skipped")) << end;
  EXPECT_EQ(absl::StatusCode::kDataLoss, (*loader)->Next().status().code());  // sticky
}

TEST(FeatureNames, ClosestName) {
  EXPECT_EQ("image", ClosestName("imgae", {"label", "image", "image/encoded"}));
  EXPECT_EQ("image/encoded", ClosestName("image/encode", {"label", "image", "image/encoded"}));
  EXPECT_EQ("", ClosestName("x", {}));
}

}  // namespace
}  // namespace shardfeed
