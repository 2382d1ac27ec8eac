#include "reader/feature_spec.h"

#include "gtest/gtest.h"

namespace shardfeed {
namespace {

TEST(FeatureSpec, ParsesEveryForm) {
  auto spec = ParseSpec("image:uint8[3,32,32], label:int64; vec:float32[2x4]=0.5;jpeg:bytes");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(4u, spec->size());
  EXPECT_EQ((std::vector<int64_t>{3, 32, 32}), (*spec)[0].shape);
  EXPECT_EQ(3072u, (*spec)[0].row_bytes());
  EXPECT_EQ(DType::kInt64, (*spec)[1].dtype);
  EXPECT_TRUE((*spec)[1].shape.empty());
  EXPECT_EQ(32u, (*spec)[2].row_bytes());
  EXPECT_TRUE((*spec)[2].has_default);
  EXPECT_EQ(0.5, (*spec)[2].default_value);
  EXPECT_TRUE((*spec)[3].variable_length);
  EXPECT_EQ("image:uint8[3x32x32];label:int64;vec:float32[2x4]=0.5;jpeg:bytes", SpecToString(*spec));
}

TEST(FeatureSpec, RejectsNonsense) {
  EXPECT_FALSE(ParseSpec("").ok());
  EXPECT_FALSE(ParseSpec("image").ok());
  EXPECT_FALSE(ParseSpec("image:uint8").ok());  // uint8 needs a shape
  EXPECT_FALSE(ParseSpec("x:complex64").ok());
  EXPECT_FALSE(ParseSpec("x:int64[0]").ok());
}

TEST(FeatureSpec, FromManifest) {
  Manifest m;
  auto* image = m.add_features();
  image->set_name("image");
  image->set_kind("bytes");
  image->set_length(1);
  image->set_dtype("uint8");
  image->add_shape(28);
  image->add_shape(28);
  auto* label = m.add_features();
  label->set_name("label");
  label->set_kind("int64");
  label->set_length(1);
  auto* jpeg = m.add_features();
  jpeg->set_name("image/encoded");
  jpeg->set_kind("bytes");
  jpeg->set_length(1);
  auto spec = SpecFromManifest(m);
  ASSERT_EQ(3u, spec.size());
  EXPECT_EQ(784u, spec[0].row_bytes());
  EXPECT_EQ(DType::kInt64, spec[1].dtype);
  EXPECT_TRUE(spec[2].variable_length);
}

// Was: "int64[]" parsed as a scalar int64 (then DATA_LOSS at the first batch).
TEST(FeatureSpec, EmptyBracketsAreVariableLengthAndFloat64IsRaw) {
  auto spec = ParseSpec("tokens:int64[],w:float32[],x:float64[3],y:float64[],z:float64");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(5u, spec->size());
  EXPECT_TRUE((*spec)[0].variable_length);
  EXPECT_EQ(DType::kInt64, (*spec)[0].dtype);
  EXPECT_TRUE((*spec)[1].variable_length);
  EXPECT_EQ(DType::kFloat64, (*spec)[2].dtype);
  EXPECT_EQ(24u, (*spec)[2].row_bytes());
  EXPECT_TRUE(IsRawBytes((*spec)[2]));
  EXPECT_TRUE((*spec)[3].variable_length);
  EXPECT_EQ(8u, (*spec)[4].row_bytes());
  EXPECT_EQ("tokens:int64[];w:float32[];x:float64[3];y:float64[];z:float64", SpecToString(*spec));
  EXPECT_EQ(SpecToString(*spec), SpecToString(*ParseSpec(SpecToString(*spec))));
  EXPECT_FALSE(ParseSpec("tokens:int64[]=5").ok());  // a missing row is empty, not 5
}

// Was: variable-length numbers silently left out of the default spec, and
// float64 (raw bytes) read as variable-length bytes.
TEST(FeatureSpec, FromManifestTakesEveryFeatureAndSaysWhatItChanged) {
  Manifest m;
  auto add = [&](const std::string& name, const std::string& kind, int64_t length,
                 const std::string& dtype = "", std::vector<int64_t> shape = {}) {
    FeatureSchema* f = m.add_features();
    f->set_name(name);
    f->set_kind(kind);
    f->set_length(length);
    f->set_dtype(dtype);
    for (int64_t d : shape) f->add_shape(d);
    return f;
  };
  add("tokens", "int64", 0);
  add("score", "bytes", 1, "float64", {2, 3});
  add("scalar", "bytes", 1, "float64");
  add("ragged", "bytes", 1, "float64", {-1});
  add("weight", "float", 1)->set_optional(true);
  add("empty", "", 0);
  std::vector<std::string> notes;
  auto spec = SpecFromManifest(m, &notes);
  EXPECT_EQ("tokens:int64[];score:float64[2x3];scalar:float64;ragged:float64[];"
            "weight:float32[]=0",
            SpecToString(spec));
  ASSERT_EQ(2u, notes.size());
  EXPECT_NE(std::string::npos, notes[0].find("feature 'weight' is missing from some records"))
      << notes[0];
  EXPECT_NE(std::string::npos, notes[1].find("feature 'empty' left out: no record holds a value"))
      << notes[1];
}

}  // namespace
}  // namespace shardfeed
