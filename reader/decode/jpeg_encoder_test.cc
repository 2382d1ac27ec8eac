#include "reader/decode/jpeg_encoder.h"

#include <cmath>

#include "gtest/gtest.h"
#include "reader/decode/image_decoder.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

constexpr char kPhoto[] = "testdata/images/hymenoptera/val/ants/10308379_1b6c72e180.jpg";  // 500x375

TEST(ShrinkToMaxSide, ResizesTheLongerSideDeterministically) {
  const std::string photo = testing::ReadBytes(testing::RunfilePath(kPhoto));
  absl::StatusOr<Reencoded> a = ShrinkToMaxSide(photo, 256, 90);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->changed);
  EXPECT_EQ(a->width, 256);
  EXPECT_EQ(a->height, 192);  // round(375 * 256 / 500)
  EXPECT_LT(a->bytes.size(), photo.size() / 2);
  absl::StatusOr<Reencoded> b = ShrinkToMaxSide(photo, 256, 90);
  EXPECT_EQ(a->bytes, b->bytes);
  DecodedImage img;
  ASSERT_TRUE(DecodeImageFull(a->bytes, &img).ok());
  EXPECT_EQ(img.width, 256);
  EXPECT_EQ(img.height, 192);
  // The re-encoded image is close to the resized original (quality 90).
  absl::StatusOr<Reencoded> q100 = ShrinkToMaxSide(photo, 256, 100);
  DecodedImage ref;
  ASSERT_TRUE(DecodeImageFull(q100->bytes, &ref).ok());
  double se = 0;
  for (size_t i = 0; i < img.rgb.size(); ++i) se += std::pow(img.rgb[i] - ref.rgb[i], 2);
  EXPECT_GT(10 * std::log10(255.0 * 255 * img.rgb.size() / se), 30);
}

TEST(ShrinkToMaxSide, KeepsImagesThatFitAndRefusesBadOnes) {
  const std::string photo = testing::ReadBytes(testing::RunfilePath(kPhoto));
  absl::StatusOr<Reencoded> r = ShrinkToMaxSide(photo, 500, 90);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed);
  EXPECT_FALSE(ShrinkToMaxSide(photo.substr(0, 1000), 100, 90).ok());
  EXPECT_FALSE(EncodeJpeg(nullptr, 0, 4, 90).ok());
}

}  // namespace
}  // namespace shardfeed
