// DecodeExampleRow with decoded features: images and WAV decoded straight
// into their rows, padded number lists, NAME/length, optional features, and
// errors that keep the decoder's code and name the feature.
#include "reader/decoder.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "converter/example_encoder.h"
#include "gtest/gtest.h"
#include "reader/decode/image_decoder.h"
#include "reader/feature_spec.h"
#include "reader/feature_transforms.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

std::string Jpeg() { return testing::ReadBytes(testing::RunfilePath("testdata/decode/rgb420.jpg")); }

std::string Wav16(const std::vector<int16_t>& samples) {
  auto le = [](std::string* s, uint32_t v, int n) {
    for (int i = 0; i < n; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
  };
  std::string w = "RIFF";
  le(&w, 36 + 2 * samples.size(), 4);
  w += "WAVEfmt ";
  le(&w, 16, 4);
  le(&w, 1, 2);
  le(&w, 1, 2);
  le(&w, 16000, 4);
  le(&w, 32000, 4);
  le(&w, 2, 2);
  le(&w, 16, 2);
  w += "data";
  le(&w, 2 * samples.size(), 4);
  for (int16_t v : samples) le(&w, static_cast<uint16_t>(v), 2);
  return w;
}

// Rows for every spec, and the pointers DecodeExampleRow takes.
struct Rows {
  explicit Rows(const std::vector<FeatureSpec>& spec) : data(spec.size()), var(spec.size()) {
    for (size_t i = 0; i < spec.size(); ++i) {
      data[i].assign(spec[i].variable_length ? 0 : spec[i].row_bytes(), '\x7f');
      fixed.push_back(spec[i].variable_length ? nullptr : data[i].data());
      var_ptr.push_back(&var[i]);
    }
  }
  template <typename T>
  const T* As(size_t i) const { return reinterpret_cast<const T*>(data[i].data()); }
  std::vector<std::string> data, var;
  std::vector<char*> fixed;
  std::vector<std::string*> var_ptr;
};

std::vector<FeatureSpec> Spec(const std::map<std::string, std::string>& decode) {
  absl::StatusOr<std::vector<FeatureSpec>> spec =
      ParseSpec("image:bytes,audio:bytes,label:int64,raw:bytes");
  EXPECT_TRUE(spec.ok());
  absl::Status s = ApplyDecodeSpecs(decode, &*spec);
  EXPECT_TRUE(s.ok()) << s;
  return *spec;
}

TEST(DecodeSpecs, ShapeTheFeaturesAndAddLengths) {
  std::vector<FeatureSpec> spec = Spec({{"image", "image,random_resized_crop=24x16,flip"},
                                        {"audio", "audio,length=8"},
                                        {"tokens", "int64,length=5,pad=-1,optional"}});
  EXPECT_EQ(SpecToString(spec).substr(0, 41), "image:uint8[16x24x3] (decoded: image,rand");
  ASSERT_EQ(spec.size(), 7u);
  EXPECT_EQ(spec[1].name, "audio");
  EXPECT_EQ(spec[1].dtype, DType::kFloat32);
  EXPECT_EQ(spec[1].shape, (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(spec[2].name, "audio/length");
  EXPECT_EQ(spec[5].name, "tokens");
  EXPECT_EQ(spec[6].name, "tokens/length");
  // The same spec again is a no-op; a different one, a wrong kind, an
  // unknown feature are errors.
  EXPECT_TRUE(ApplyDecodeSpecs({{"image", "image,random_resized_crop=24x16,flip"}}, &spec).ok());
  EXPECT_FALSE(ApplyDecodeSpecs({{"image", "image,center_crop=8"}}, &spec).ok());
  EXPECT_FALSE(ApplyDecodeSpecs({{"label", "image,center_crop=8"}}, &spec).ok());
  EXPECT_FALSE(ApplyDecodeSpecs({{"raw", "int64,length=3"}}, &spec).ok());
  EXPECT_FALSE(ApplyDecodeSpecs({{"nope", "audio,length=3"}}, &spec).ok());
  auto parsed = ParseDecodeOption("a=image,center_crop=8; b=audio,length=4");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((*parsed)["a"], "image,center_crop=8");
  EXPECT_EQ((*parsed)["b"], "audio,length=4");
  EXPECT_FALSE(ParseDecodeOption("image,center_crop=8").ok());
}

TEST(DecodeExampleRow, DecodesImageAudioAndPaddedLists) {
  const std::vector<FeatureSpec> spec = Spec({{"image", "image,random_resized_crop=24x16,flip"},
                                              {"audio", "audio,length=8"},
                                              {"tokens", "int64,length=5,pad=-1"},
                                              {"scores", "float32,length=2,optional"}});
  const std::string jpeg = Jpeg(), wav = Wav16({16384, -16384, 8192});
  ExampleEncoder e;
  e.AddBytes("image", jpeg);
  e.AddBytes("audio", wav);
  e.AddInt64("label", 3);
  e.AddBytes("raw", "xyz");
  const std::vector<int64_t> tokens = {7, 8, 9};
  e.AddInt64List("tokens", tokens);
  const std::string record = e.Finish();
  Rows rows(spec);
  const DecodeContext context{5, 11};
  absl::Status s = DecodeExampleRow(record, spec, rows.fixed.data(), rows.var_ptr.data(), context);
  ASSERT_TRUE(s.ok()) << s;
  // The image row is what the image decoder gives for the same (seed, sample).
  std::vector<uint8_t> want(16 * 24 * 3);
  ASSERT_TRUE(CpuImageDecoder().DecodeInto(jpeg, spec[0].decode.image, 5, 11, want.data()).ok());
  EXPECT_EQ(0, std::memcmp(rows.data[0].data(), want.data(), want.size()));
  EXPECT_EQ(rows.As<float>(1)[0], 0.5f);
  EXPECT_EQ(rows.As<float>(1)[2], 0.25f);
  EXPECT_EQ(rows.As<float>(1)[3], 0.0f);
  EXPECT_EQ(*rows.As<int64_t>(2), 3);  // audio/length
  EXPECT_EQ(*rows.As<int64_t>(3), 3);  // label
  EXPECT_EQ(rows.var[4], "xyz");
  // Lists are added in name order: scores, scores/length, tokens, tokens/length.
  ASSERT_EQ(spec[7].name, "tokens");
  EXPECT_EQ(std::vector<int64_t>(rows.As<int64_t>(7), rows.As<int64_t>(7) + 5),
            (std::vector<int64_t>{7, 8, 9, -1, -1}));
  EXPECT_EQ(*rows.As<int64_t>(8), 3);  // tokens/length
  EXPECT_EQ(spec[5].name, "scores");
  EXPECT_EQ(rows.As<float>(5)[1], 0.0f);  // optional, missing
  EXPECT_EQ(*rows.As<int64_t>(6), 0);     // scores/length
}

TEST(DecodeExampleRow, TruncatesLongListsAndReportsWhatItKept) {
  std::vector<FeatureSpec> spec;
  ASSERT_TRUE(ApplyDecodeSpecs({{"tokens", "int64,length=2"}}, &spec).ok());
  ExampleEncoder e;
  const std::vector<int64_t> tokens = {1, 2, 3, 4};
  e.AddInt64List("tokens", tokens);
  Rows rows(spec);
  ASSERT_TRUE(DecodeExampleRow(e.Finish(), spec, rows.fixed.data(), rows.var_ptr.data()).ok());
  EXPECT_EQ(rows.As<int64_t>(0)[1], 2);
  EXPECT_EQ(*rows.As<int64_t>(1), 2);
}

TEST(DecodeExampleRow, DecoderErrorsKeepTheirCodeAndNameTheFeature) {
  const std::vector<FeatureSpec> spec = Spec({{"image", "image,center_crop=8"}});
  const std::string jpeg = Jpeg();
  for (auto [bytes, code] : {std::pair{jpeg.substr(0, jpeg.size() / 2), absl::StatusCode::kDataLoss},
                             std::pair{std::string("GIF89a"), absl::StatusCode::kInvalidArgument},
                             std::pair{std::string(), absl::StatusCode::kInvalidArgument}}) {
    ExampleEncoder e;
    e.AddBytes("image", bytes);
    e.AddBytes("audio", "a");
    e.AddInt64("label", 1);
    e.AddBytes("raw", "r");
    Rows rows(spec);
    absl::Status s = DecodeExampleRow(e.Finish(), spec, rows.fixed.data(), rows.var_ptr.data());
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find("feature 'image'"), std::string::npos) << s;
  }
}

// A record that fails names the file it was converted from when it carries
// one (image-folder's image/filename, files' filename), so a bad image can
// be found without mapping a shard offset back to it.
TEST(DecodeExampleRow, ErrorsNameTheSourceFile) {
  const std::vector<FeatureSpec> spec = Spec({{"image", "image,center_crop=8"}});
  const std::string gif = "GIF89a", name = "ants/not-a-photo.gif";  // outlive Finish()
  for (const char* key : {"image/filename", "filename"}) {
    ExampleEncoder e;
    e.AddBytes("image", gif);
    e.AddBytes(key, name);
    Rows rows(spec);
    absl::Status s = DecodeExampleRow(e.Finish(), spec, rows.fixed.data(), rows.var_ptr.data());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(std::string("(from ") + key + " 'ants/not-a-photo.gif')"),
              std::string::npos) << s;
  }
  ExampleEncoder e;  // no file name: nothing added
  e.AddBytes("image", gif);
  Rows rows(spec);
  absl::Status s = DecodeExampleRow(e.Finish(), spec, rows.fixed.data(), rows.var_ptr.data());
  EXPECT_EQ(s.message().find("(from"), std::string::npos) << s;
}

// A decoded image is a fixed-shape uint8 HWC feature, so the fused transform
// takes it (size from the decode spec) with the imagenet preset.
TEST(DecodeSpecs, DecodedImagesTakeTheImagenetTransform) {
  std::vector<FeatureSpec> spec = Spec({{"image", "image,resize=256,center_crop=224"}});
  absl::StatusOr<FeatureTransform> t = ParseTransform("image=hwc,float16,imagenet");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->transform.mean, (std::vector<float>{0.485f, 0.456f, 0.406f}));
  EXPECT_EQ(t->transform.std, (std::vector<float>{0.229f, 0.224f, 0.225f}));
  std::vector<FeatureTransform> transforms = {*t};
  std::vector<int> transform_of;
  absl::Status s = ResolveTransforms(spec, &transforms, &transform_of);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(transform_of[0], 0);
  EXPECT_EQ(transforms[0].transform.height, 224);
  EXPECT_EQ(transforms[0].transform.channels, 3);
}

// The two ways users get the transform wrong say what to write instead
// (old messages: "bad image shape 0x0x0", "3 means for 224 channels").
TEST(DecodeSpecs, TransformMistakesSayWhatToWrite) {
  std::vector<FeatureTransform> transforms = {*ParseTransform("image=hwc,float16,imagenet")};
  std::vector<int> transform_of;
  absl::Status s = ResolveTransforms(*ParseSpec("image:bytes"), &transforms, &transform_of);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("decode them first, e.g. decode={'image': 'image,"), std::string::npos)
      << s;
  transforms = {*ParseTransform("image=chw,float16,imagenet")};
  s = ResolveTransforms(Spec({{"image", "image,resize=256,center_crop=224"}}), &transforms,
                        &transform_of);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("decoded images are HWC uint8 [H, W, 3]: write 'hwc,...'"),
            std::string::npos) << s;
}

// Regression (issue 21, defect 7): the loader's option checks refuse what
// the device kernel cannot run (9 channels) and non-finite numbers, whatever
// the device, instead of failing every GPU fill later.
TEST(ParseTransform, OptionChecksRefuseNineChannelsAndNonFiniteNumbers) {
  std::vector<FeatureTransform> transforms = {*ParseTransform("image=chw")};
  std::vector<int> transform_of;
  absl::Status s = ResolveTransforms(*ParseSpec("image:uint8[9,4,4]"), &transforms, &transform_of);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("9 channels, at most 8"), std::string::npos) << s;
  for (const char* text : {"image=chw,scale=nan", "image=chw,scale=inf", "image=chw,mean=0/nan/0",
                           "image=chw,mean=-inf/0/0"}) {
    transforms = {*ParseTransform(text)};
    s = ResolveTransforms(*ParseSpec("image:uint8[3,4,4]"), &transforms, &transform_of);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text << ": " << s;
    EXPECT_NE(s.message().find("is not a finite number"), std::string::npos) << s;
  }
}

// float64 tensors are raw doubles: exact, and a wrong byte count is named.
TEST(DecodeExampleRow, Float64IsExactAndItsSizeChecked) {
  auto spec = *ParseSpec("x:float64[2],v:float64[],n:int64[]");
  const double x[2] = {1e-300, 0.1};
  const double v[3] = {4.9e-324, -0.0, 1e300};
  const int64_t n[2] = {-5, 7};
  ExampleEncoder e;
  e.AddBytes("x", absl::string_view(reinterpret_cast<const char*>(x), sizeof(x)));
  e.AddBytes("v", absl::string_view(reinterpret_cast<const char*>(v), sizeof(v)));
  e.AddInt64List("n", n);
  Rows rows(spec);
  ASSERT_TRUE(DecodeExampleRow(e.Finish(), spec, rows.fixed.data(), rows.var_ptr.data()).ok());
  EXPECT_EQ(0, std::memcmp(x, rows.data[0].data(), sizeof(x)));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(v), sizeof(v)), rows.var[1]);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(n), sizeof(n)), rows.var[2]);
  ExampleEncoder bad;
  bad.AddBytes("x", absl::string_view(reinterpret_cast<const char*>(x), 12));
  bad.AddBytes("v", "abc");
  bad.AddInt64List("n", n);
  Rows rows2(spec);
  absl::Status s = DecodeExampleRow(bad.Finish(), spec, rows2.fixed.data(), rows2.var_ptr.data());
  EXPECT_EQ("feature 'x': is 12 bytes, expected 16 (2 float64 values)", s.message());
}

}  // namespace
}  // namespace shardfeed
