// Image decoding against independent references (testdata/decode, made by
// testdata/make_decode_fixtures.py with Pillow and numpy): full decodes bit
// for bit, crops and resizes bit for bit or within a stated PSNR, and bad
// input refused with the right code.
#include "reader/decode/image_decoder.h"

#include <cmath>
#include <cstring>
#include <string>

#include <zlib.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "reader/decode/image_codecs.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

using testing::ReadBytes;
using testing::RunfilePath;

constexpr char kBig[] = "testdata/images/hymenoptera/val/ants/10308379_1b6c72e180.jpg";

std::string Fixture(const std::string& name) {
  return ReadBytes(RunfilePath(name.find('/') == std::string::npos ? "testdata/decode/" + name
                                                                   : name));
}

DecodedImage ReadPpm(const std::string& name) {
  const std::string bytes = Fixture(name);
  // "P6\nW H\n255\n" then the pixels.
  std::vector<std::string> head = absl::StrSplit(bytes.substr(0, 32), absl::ByAnyChar(" \n"));
  DecodedImage img;
  EXPECT_EQ(head[0], "P6");
  EXPECT_TRUE(absl::SimpleAtoi(head[1], &img.width));
  EXPECT_TRUE(absl::SimpleAtoi(head[2], &img.height));
  const size_t n = static_cast<size_t>(img.width) * img.height * 3;
  img.rgb.assign(bytes.end() - n, bytes.end());
  return img;
}

double Psnr(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  EXPECT_EQ(a.size(), b.size());
  double se = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) se += (a[i] - b[i]) * (a[i] - b[i]);
  if (se == 0) return 99;
  return 10 * std::log10(255.0 * 255.0 / (se / a.size()));
}

int MaxDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  int m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

class FullDecode : public ::testing::TestWithParam<const char*> {};

// Pillow decodes JPEG with libjpeg-turbo's defaults (JDCT_ISLOW, fancy
// upsampling), the settings we set: same pixels, bit for bit. PNG references
// come from the arrays that were written (alpha dropped, 16-bit >> 8).
TEST_P(FullDecode, EqualsReferenceBitForBit) {
  DecodedImage got;
  ASSERT_TRUE(DecodeImageFull(Fixture(GetParam()), &got).ok());
  DecodedImage want = ReadPpm(std::string(GetParam()) + ".ppm");
  EXPECT_EQ(got.width, want.width);
  EXPECT_EQ(got.height, want.height);
  EXPECT_EQ(MaxDiff(got.rgb, want.rgb), 0);
  EXPECT_TRUE(got.rgb == want.rgb);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FullDecode,
                         ::testing::Values("rgb420.jpg", "rgb422.jpg", "rgb444.jpg",
                                           "progressive.jpg", "gray.jpg", "cmyk.jpg", "rgba.png",
                                           "palette.png", "gray.png", "graya.png", "rgb16.png",
                                           "gray16.png"));

ImageDecodeSpec RrcSpec(int w, int h, bool dct) {
  ImageDecodeSpec s;
  s.mode = ImageMode::kRandomResizedCrop;
  s.out_w = w;
  s.out_h = h;
  s.dct_scaling = dct;
  return s;
}

std::vector<uint8_t> DecodeBox(const std::string& bytes, const ImageDecodeSpec& spec,
                               CropBox box) {
  std::vector<uint8_t> out(static_cast<size_t>(spec.out_w) * spec.out_h * 3);
  absl::Status s = DecodeBoxInto(bytes, spec, [&](int, int) { return box; }, out.data());
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// A crop (only its rows and iMCU columns decoded) then resized: torchvision's
// crop + resize(antialias) on PIL images, which is Pillow's resize.
TEST(CropResize, MatchesPillowBitForBitWithoutDctScaling) {
  const std::string big = Fixture(kBig);
  for (auto [w, h, name] : {std::tuple{32, 32, "crop_37_50_300x260_to_32.ppm"},
                            std::tuple{96, 80, "crop_37_50_300x260_to_96x80.ppm"}}) {
    std::vector<uint8_t> got = DecodeBox(big, RrcSpec(w, h, false), CropBox{37, 50, 337, 310});
    EXPECT_EQ(MaxDiff(got, ReadPpm(name).rgb), 0) << name;
  }
}

// At 1/8 (300x260 -> 32x32) or 1/2 (-> 96x80) DCT scale the pixels differ
// from Pillow's full-size resampling; bound: PSNR >= 30 dB.
TEST(CropResize, DctScalingStaysWithinPsnrBound) {
  const std::string big = Fixture(kBig);
  for (auto [w, h, name] : {std::tuple{32, 32, "crop_37_50_300x260_to_32.ppm"},
                            std::tuple{96, 80, "crop_37_50_300x260_to_96x80.ppm"}}) {
    std::vector<uint8_t> got = DecodeBox(big, RrcSpec(w, h, true), CropBox{37, 50, 337, 310});
    const std::vector<uint8_t> want = ReadPpm(name).rgb;
    EXPECT_GE(Psnr(got, want), 30.0) << name;
    EXPECT_NE(got, want) << name << ": the scaled path was not taken";
  }
}

TEST(CropResize, FlipMirrorsColumns) {
  const std::string big = Fixture(kBig);
  CropBox box{37, 50, 337, 310};
  std::vector<uint8_t> plain = DecodeBox(big, RrcSpec(32, 32, false), box);
  box.flip = true;
  std::vector<uint8_t> flipped = DecodeBox(big, RrcSpec(32, 32, false), box);
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 32; ++x) {
      for (int c = 0; c < 3; ++c) {
        ASSERT_EQ(flipped[(y * 32 + x) * 3 + c], plain[(y * 32 + 31 - x) * 3 + c]);
      }
    }
  }
}

// The evaluation preset: Resize(40) + CenterCrop(32), fused into one
// resampling of the box the crop maps back to.
TEST(ResizeCenterCrop, MatchesTorchvisionOnPil) {
  const std::string big = Fixture(kBig);
  absl::StatusOr<DecodeSpec> exact = ParseDecodeSpec("image,resize=40,center_crop=32,no_dct_scaling");
  absl::StatusOr<DecodeSpec> scaled = ParseDecodeSpec("image,resize=40,center_crop=32");
  ASSERT_TRUE(exact.ok() && scaled.ok());
  std::vector<uint8_t> out(32 * 32 * 3);
  const std::vector<uint8_t> want = ReadPpm("resize40_center32.ppm").rgb;
  ASSERT_TRUE(CpuImageDecoder().DecodeInto(big, exact->image, 0, 0, out.data()).ok());
  EXPECT_LE(MaxDiff(out, want), 1);  // float box edges: off by one at most
  EXPECT_GE(Psnr(out, want), 50.0);
  ASSERT_TRUE(CpuImageDecoder().DecodeInto(big, scaled->image, 0, 0, out.data()).ok());
  EXPECT_GE(Psnr(out, want), 30.0);
}

// Decoding only the crop's rows and columns gives the same pixels as the
// full decode (libjpeg-turbo's crop keeps the upsampling context).
TEST(CropResize, PartialJpegDecodeEqualsFullDecode) {
  for (const char* name : {"rgb420.jpg", "rgb422.jpg", "progressive.jpg", "cmyk.jpg"}) {
    const std::string bytes = Fixture(name);
    DecodedImage full;
    ASSERT_TRUE(DecodeImageFull(bytes, &full).ok());
    // iMCU-aligned and unaligned edges, top rows, right edge.
    for (CropBox box : {CropBox{19, 13, 50, 40}, CropBox{16, 16, 48, 40}, CropBox{19, 0, 50, 27},
                        CropBox{33, 5, 67, 45}}) {
      const int w = box.x1 - box.x0, h = box.y1 - box.y0;
      std::vector<uint8_t> got = DecodeBox(bytes, RrcSpec(w, h, true), box);
      for (int y = 0; y < h; ++y) {
        const size_t at = ((box.y0 + y) * full.width + box.x0) * 3;
        ASSERT_EQ(0, std::memcmp(&got[y * w * 3], &full.rgb[at], w * 3))
            << name << " box at " << box.x0 << "," << box.y0 << " row " << y;
      }
    }
  }
}

absl::Status DecodeTo224(const std::string& bytes) {
  ImageDecodeSpec spec = RrcSpec(224, 224, true);
  std::vector<uint8_t> out(224 * 224 * 3);
  return CpuImageDecoder().DecodeInto(bytes, spec, 1, 2, out.data());
}

TEST(BadInput, TruncatedJpegIsDataLoss) {
  const std::string big = Fixture(kBig);
  for (size_t keep : {big.size() / 2, big.size() - 200, size_t{600}}) {
    absl::Status s = DecodeTo224(big.substr(0, keep));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << keep << ": " << s;
  }
  DecodedImage img;
  EXPECT_EQ(DecodeImageFull(big.substr(0, big.size() / 2), &img).code(),
            absl::StatusCode::kDataLoss);
}

TEST(BadInput, EmptyAndForeignFormatsAreInvalidArgument) {
  EXPECT_EQ(DecodeTo224("").code(), absl::StatusCode::kInvalidArgument);
  absl::Status gif = DecodeTo224("GIF89a\x01\x00\x01\x00");
  EXPECT_EQ(gif.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(gif.message().find("47 49 46 38"), std::string::npos) << gif;
  EXPECT_EQ(DecodeTo224(std::string("\xff\xd8\xff") + std::string(50, '\0')).code(),
            absl::StatusCode::kDataLoss);
}

TEST(BadInput, PngDeclaredAsJpegIsRefused) {
  ImageDecodeSpec spec = RrcSpec(8, 8, true);
  spec.format = ImageDecodeSpec::Format::kJpeg;
  std::vector<uint8_t> out(8 * 8 * 3);
  absl::Status s = CpuImageDecoder().DecodeInto(Fixture("rgba.png"), spec, 0, 0, out.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is a PNG"), std::string::npos) << s;
  spec.format = ImageDecodeSpec::Format::kAny;
  EXPECT_TRUE(CpuImageDecoder().DecodeInto(Fixture("rgba.png"), spec, 0, 0, out.data()).ok());
}

// A 65000 x 65000 header is refused before any pixel memory is allocated
// (4.2 G pixels; the test would not survive allocating them).
TEST(BadInput, HugeJpegHeaderIsRefused) {
  std::string bytes = Fixture("rgb420.jpg");
  const size_t sof = bytes.find("\xff\xc0");
  ASSERT_NE(sof, std::string::npos);
  // SOF0: FF C0, length(2), precision(1), height(2), width(2).
  bytes[sof + 5] = bytes[sof + 7] = static_cast<char>(0xfd);
  bytes[sof + 6] = bytes[sof + 8] = static_cast<char>(0xe8);
  absl::Status s = DecodeTo224(bytes);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("65000x65000"), std::string::npos) << s;
}

TEST(BadInput, HugePngHeaderIsRefused) {
  std::string bytes = Fixture("gray.png");
  // IHDR data at 16..28 (width, height), its CRC at 29..32.
  const char dims[8] = {0, 0, char(0xfd), char(0xe8), 0, 0, char(0xfd), char(0xe8)};
  bytes.replace(16, 8, dims, 8);
  const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(&bytes[12]), 17);
  for (int i = 0; i < 4; ++i) bytes[29 + i] = static_cast<char>(crc >> (24 - 8 * i));
  absl::Status s = DecodeTo224(bytes);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("65000x65000"), std::string::npos) << s;
}

TEST(BadInput, TruncatedAndCorruptPngAreDataLoss) {
  const std::string png = Fixture("rgba.png");
  EXPECT_EQ(DecodeTo224(png.substr(0, png.size() / 2)).code(), absl::StatusCode::kDataLoss);
  std::string bad = png;
  bad[png.size() / 2] ^= 0x55;  // inside IDAT: its CRC no longer matches
  EXPECT_EQ(DecodeTo224(bad).code(), absl::StatusCode::kDataLoss);
}

// check's verification: header checks catch a file cut short (no JPEG
// end-of-image marker, no PNG IEND) without decoding; only a whole decode
// catches a body cut short and closed with a marker.
TEST(VerifyImage, HeadersCatchCutFilesWholeDecodeCatchesCorruptBodies) {
  for (const char* name : {"rgb420.jpg", "progressive.jpg", "cmyk.jpg", "rgba.png", "gray16.png"}) {
    const std::string good = Fixture(name);
    EXPECT_TRUE(VerifyImage(good, /*header_only=*/true).ok()) << name;
    EXPECT_TRUE(VerifyImage(good, /*header_only=*/false).ok()) << name;
    const std::string cut = good.substr(0, good.size() * 2 / 3);
    EXPECT_TRUE(absl::IsDataLoss(VerifyImage(cut, /*header_only=*/true))) << name;
    EXPECT_TRUE(absl::IsDataLoss(VerifyImage(cut, /*header_only=*/false))) << name;
  }
  const std::string jpeg = Fixture(kBig);
  const std::string closed = jpeg.substr(0, jpeg.size() / 2) + "\xff\xd9";
  EXPECT_TRUE(VerifyImage(closed, /*header_only=*/true).ok());
  EXPECT_TRUE(absl::IsDataLoss(VerifyImage(closed, /*header_only=*/false)));
  EXPECT_TRUE(absl::IsInvalidArgument(VerifyImage("GIF89a\x01\x00\x01\x00", true)));
}

}  // namespace
}  // namespace shardfeed
