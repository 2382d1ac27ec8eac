#include "converter/image_header.h"

#include "gtest/gtest.h"

namespace shardfeed {
namespace {

TEST(ImageHeader, Png) {
  std::string png("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x01\x00\0\0\0\x20", 24);
  auto info = ReadImageInfo(png, "a.png");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ("png", info->format);
  EXPECT_EQ(256, info->width);
  EXPECT_EQ(32, info->height);
}

TEST(ImageHeader, Gif) {
  std::string gif("GIF89a\x40\x01\xf0\x00", 10);
  auto info = ReadImageInfo(gif, "a.gif");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(320, info->width);
  EXPECT_EQ(240, info->height);
}

TEST(ImageHeader, JpegSkipsSegmentsToTheFrameHeader) {
  std::string jpg("\xff\xd8"                        // SOI
                  "\xff\xe0\x00\x04\x00\x00"        // APP0, 2 bytes of payload
                  "\xff\xdb\x00\x03\x00"            // DQT
                  "\xff\xc2\x00\x0b\x08\x00\x20\x01\x40\x03\x00",  // SOF2 32x320
                  24);
  auto info = ReadImageInfo(jpg, "a.jpg");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ("jpeg", info->format);
  EXPECT_EQ(320, info->width);
  EXPECT_EQ(32, info->height);
}

TEST(ImageHeader, TruncatedOrForeignIsAnErrorNamingTheFile) {
  auto cut = ReadImageInfo(std::string("\xff\xd8\xff\xe0\x00\x10", 6), "cut.jpg");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(std::string::npos, cut.status().message().find("cut.jpg: JPEG"));
  EXPECT_FALSE(ReadImageInfo("hello", "x.txt").ok());
  EXPECT_FALSE(LooksLikeImage("hello"));
  EXPECT_TRUE(LooksLikeImage("GIF87a..."));
}

}  // namespace
}  // namespace shardfeed
