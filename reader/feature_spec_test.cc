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

}  // namespace
}  // namespace shardfeed
