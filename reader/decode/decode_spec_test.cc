#include "reader/decode/decode_spec.h"

#include "gtest/gtest.h"

namespace shardfeed {
namespace {

TEST(ParseDecodeSpec, TrainingImage) {
  absl::StatusOr<DecodeSpec> s = ParseDecodeSpec("image,random_resized_crop=224,flip");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->kind, DecodeKind::kImage);
  EXPECT_EQ(s->image.mode, ImageMode::kRandomResizedCrop);
  EXPECT_EQ(s->image.out_w, 224);
  EXPECT_EQ(s->image.out_h, 224);
  EXPECT_TRUE(s->image.flip);
  EXPECT_DOUBLE_EQ(s->image.scale_min, 0.08);
}

TEST(ParseDecodeSpec, EvaluationImageAndOptions) {
  absl::StatusOr<DecodeSpec> s = ParseDecodeSpec("image, resize=256, center_crop=224");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->image.mode, ImageMode::kResizeCenterCrop);
  EXPECT_EQ(s->image.resize, 256);
  EXPECT_FALSE(s->image.flip);
  s = ParseDecodeSpec("image,random_resized_crop=160x128,scale=0.35:1,ratio=0.5:2,format=jpeg");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->image.out_w, 160);
  EXPECT_EQ(s->image.out_h, 128);
  EXPECT_DOUBLE_EQ(s->image.scale_min, 0.35);
  EXPECT_DOUBLE_EQ(s->image.ratio_max, 2);
  EXPECT_EQ(s->image.format, ImageDecodeSpec::Format::kJpeg);
  s = ParseDecodeSpec("image,resize=128x96");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->image.mode, ImageMode::kResize);
  EXPECT_EQ(s->image.out_h, 96);
}

TEST(ParseDecodeSpec, AudioAndLists) {
  absl::StatusOr<DecodeSpec> s = ParseDecodeSpec("audio,length=16000,random_crop,rate=16000");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->kind, DecodeKind::kAudio);
  EXPECT_EQ(s->audio.length, 16000);
  EXPECT_EQ(s->audio.rate, 16000);
  EXPECT_EQ(s->audio.channels, 1);
  EXPECT_TRUE(s->audio.random_crop);
  s = ParseDecodeSpec("int64,length=128,pad=-1");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->kind, DecodeKind::kInt64List);
  EXPECT_EQ(s->list_length, 128);
  EXPECT_DOUBLE_EQ(s->pad, -1);
  EXPECT_EQ(ParseDecodeSpec("float32,length=4")->kind, DecodeKind::kFloatList);
}

TEST(ParseDecodeSpec, RejectsWhatCannotBeAFixedShape) {
  for (const char* bad : {"", "video,length=3", "image", "image,resize=256", "image,flip=1",
                          "image,random_resized_crop=0", "image,random_resized_crop=224,scale=0.5:2",
                          "audio,random_crop", "audio,length=-4", "int64", "int64,length=x",
                          "image,random_resized_crop=99999", "image,center_crop=224,format=gif"}) {
    absl::StatusOr<DecodeSpec> s = ParseDecodeSpec(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

// A bad option's error says what the option takes.
TEST(ParseDecodeSpec, ErrorsSayWhatAnOptionTakes) {
  for (auto [bad, want] : {std::pair{"image,random_resized_crop=99999", "S or WxH, sizes 1..16384"},
                           std::pair{"image,resize=-1,center_crop=8", "S or WxH"},
                           std::pair{"image,center_crop=8,scale=0.5:2", "0 < MIN <= MAX <= 1"},
                           std::pair{"image,center_crop=8,format=gif", "jpeg or png"},
                           std::pair{"image,center_crop=8,sharpen", "options: random_resized_crop="}}) {
    absl::StatusOr<DecodeSpec> s = ParseDecodeSpec(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find(want), std::string::npos) << s.status();
  }
}

}  // namespace
}  // namespace shardfeed
