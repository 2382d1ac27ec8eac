// The host reference of the image transform against hand-computed values
// and independent properties; then the CUDA kernels against the reference
// (fresh random inputs, poisoned outputs). The device tests skip, saying
// so, where there is no CUDA device.
#include "gpu/image_transform.h"

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "gpu/augment_rng.h"
#include "gpu/cuda_resources.h"
#include "gpu/cuda_status.h"
#include "gpu/device.h"
#include "gpu/gather_kernel.h"
#include "gpu/image_transform_kernel.h"
#include "gtest/gtest.h"

namespace shardfeed::gpu {
namespace {

TEST(HalfConversion, KnownValues) {
  EXPECT_EQ(0x3c00, FloatToHalfBits(1.0f));
  EXPECT_EQ(0xc000, FloatToHalfBits(-2.0f));
  EXPECT_EQ(0x3555, FloatToHalfBits(1.0f / 3.0f));
  EXPECT_EQ(0x7bff, FloatToHalfBits(65504.0f));
  EXPECT_EQ(0x7bff, FloatToHalfBits(65519.0f));
  EXPECT_EQ(0x7c00, FloatToHalfBits(65520.0f));   // the tie rounds to even: infinity
  EXPECT_EQ(0x0001, FloatToHalfBits(std::ldexp(1.0f, -24)));
  EXPECT_EQ(0x0000, FloatToHalfBits(std::ldexp(1.0f, -25)));  // tie to even: zero
  EXPECT_EQ(0x0001, FloatToHalfBits(std::ldexp(1.5f, -25)));
  EXPECT_EQ(0x0400, FloatToHalfBits(std::ldexp(1.0f, -14)));  // smallest normal
  EXPECT_EQ(0x3c00, FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)));  // tie: even
  EXPECT_EQ(0x3c02, FloatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)));
}

TEST(HalfConversion, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0) continue;  // NaN payloads
    ASSERT_EQ(h, FloatToHalfBits(HalfBitsToFloat(static_cast<uint16_t>(h)))) << std::hex << h;
  }
}

TEST(BFloat16Conversion, KnownValuesAndRoundTrip) {
  EXPECT_EQ(0x3f80, FloatToBFloat16Bits(1.0f));
  uint32_t tie_even = 0x3f808000, tie_odd = 0x3f818000, above = 0x3f808001;
  float f;
  std::memcpy(&f, &tie_even, 4);
  EXPECT_EQ(0x3f80, FloatToBFloat16Bits(f));
  std::memcpy(&f, &tie_odd, 4);
  EXPECT_EQ(0x3f82, FloatToBFloat16Bits(f));
  std::memcpy(&f, &above, 4);
  EXPECT_EQ(0x3f81, FloatToBFloat16Bits(f));
  for (uint32_t h = 0; h < 0x10000; h += 7) {
    if ((h & 0x7f80) == 0x7f80) continue;
    ASSERT_EQ(h, FloatToBFloat16Bits(BFloat16BitsToFloat(static_cast<uint16_t>(h))));
  }
}

ImageTransform Plain(ImageLayout layout, int c, int h, int w) {
  ImageTransform t;
  t.layout = layout;
  t.channels = c;
  t.height = h;
  t.width = w;
  t.scale = 1.0f;
  return t;
}

TEST(TransformOnHost, HwcBecomesChw) {
  const ImageTransform t = Plain(ImageLayout::kHWC, 2, 2, 3);
  std::vector<uint8_t> in(12);
  for (int i = 0; i < 12; ++i) in[i] = static_cast<uint8_t>(i);  // HWC: (y*3+x)*2+c
  std::vector<float> out(12, -1);
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), 1, 0, out.data()).ok());
  // Channel 0 is every even byte, channel 1 every odd one.
  EXPECT_EQ((std::vector<float>{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}), out);
}

TEST(TransformOnHost, PlanarCifarStaysChw) {
  const ImageTransform t = Plain(ImageLayout::kCHW, 3, 4, 5);
  std::vector<uint8_t> in(2 * 60);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
  std::vector<float> out(in.size());
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), 2, 0, out.data()).ok());
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(float(in[i]), out[i]) << i;
}

TEST(TransformOnHost, NormalizesPerChannel) {
  ImageTransform t = Plain(ImageLayout::kCHW, 2, 1, 2);
  t.scale = 1.0f / 255.0f;
  t.mean = {0.5f, 0.25f};
  t.std = {0.25f, 0.5f};
  const std::vector<uint8_t> in = {255, 0, 255, 0};
  std::vector<float> out(4);
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), 1, 0, out.data()).ok());
  EXPECT_NEAR(2.0f, out[0], 1e-6);    // (1 - .5) / .25
  EXPECT_NEAR(-2.0f, out[1], 1e-6);   // (0 - .5) / .25
  EXPECT_NEAR(1.5f, out[2], 1e-6);    // (1 - .25) / .5
  EXPECT_NEAR(-0.5f, out[3], 1e-6);   // (0 - .25) / .5
}

TEST(TransformOnHost, Float16AndBFloat16AreTheRoundedFloat32) {
  ImageTransform t = Plain(ImageLayout::kCHW, 3, 8, 8);
  t.scale = 1.0f / 255.0f;
  t.mean = {0.4914f, 0.4822f, 0.4465f};
  t.std = {0.2470f, 0.2435f, 0.2616f};
  std::mt19937 rng(7);
  std::vector<uint8_t> in(4 * 192);
  for (auto& v : in) v = static_cast<uint8_t>(rng());
  std::vector<float> f32(in.size());
  std::vector<uint16_t> f16(in.size()), bf16(in.size());
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), 4, 0, f32.data()).ok());
  t.output = OutputType::kFloat16;
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), 4, 0, f16.data()).ok());
  t.output = OutputType::kBFloat16;
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), 4, 0, bf16.data()).ok());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(FloatToHalfBits(f32[i]), f16[i]);
    ASSERT_EQ(FloatToBFloat16Bits(f32[i]), bf16[i]);
    ASSERT_NEAR(f32[i], HalfBitsToFloat(f16[i]), std::fabs(f32[i]) * 1e-3 + 1e-6);
  }
}

TEST(TransformOnHost, FlipMirrorsRowsOfAboutHalfTheImages) {
  ImageTransform t = Plain(ImageLayout::kCHW, 1, 2, 4);
  t.flip = true;
  t.seed = 42;
  const int rows = 400;
  std::vector<uint8_t> in(rows * 8);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(1 + i % 8);
  std::vector<float> out(in.size());
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), rows, 1000, out.data()).ok());
  int flipped = 0;
  for (int n = 0; n < rows; ++n) {
    const float* o = &out[n * 8];
    const std::vector<float> same = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<float> mirrored = {4, 3, 2, 1, 8, 7, 6, 5};
    std::vector<float> got(o, o + 8);
    ASSERT_TRUE(got == same || got == mirrored) << "image " << n;
    flipped += got == mirrored;
  }
  EXPECT_GT(flipped, rows * 2 / 5);
  EXPECT_LT(flipped, rows * 3 / 5);
}

TEST(TransformOnHost, RandomCropShiftsWithZeroPaddingAndCoversEveryOffset) {
  ImageTransform t = Plain(ImageLayout::kHWC, 1, 6, 6);
  t.pad = 2;
  t.seed = 3;
  const int rows = 500;
  std::vector<uint8_t> in(rows * 36);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(1 + i % 36);  // 1..36
  std::vector<float> out(in.size());
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), rows, 0, out.data()).ok());
  std::set<std::pair<int, int>> offsets;
  for (int n = 0; n < rows; ++n) {
    const float* o = &out[n * 36];
    // Find the shift from the output itself: some nonzero pixel v = 1 + sy*6 + sx
    // at (y, x) gives (dy, dx) = (sy - y, sx - x); every pixel must agree.
    int dy = 99, dx = 99;
    for (int y = 0; y < 6 && dy == 99; ++y) {
      for (int x = 0; x < 6; ++x) {
        if (o[y * 6 + x] != 0) {
          const int v = static_cast<int>(o[y * 6 + x]) - 1;
          dy = v / 6 - y;
          dx = v % 6 - x;
          break;
        }
      }
    }
    ASSERT_LE(std::abs(dy), 2);
    ASSERT_LE(std::abs(dx), 2);
    for (int y = 0; y < 6; ++y) {
      for (int x = 0; x < 6; ++x) {
        const int sy = y + dy, sx = x + dx;
        const float want = (sy < 0 || sy >= 6 || sx < 0 || sx >= 6) ? 0 : 1 + sy * 6 + sx;
        ASSERT_EQ(want, o[y * 6 + x]) << "image " << n << " at " << y << "," << x;
      }
    }
    offsets.insert({dy, dx});
  }
  EXPECT_EQ(25u, offsets.size());  // all of [-2, 2] x [-2, 2]
}

TEST(TransformOnHost, SameSampleNumberSameAugmentation) {
  ImageTransform t = Plain(ImageLayout::kCHW, 3, 8, 8);
  t.pad = 2;
  t.flip = true;
  std::vector<uint8_t> in(10 * 192);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 13);
  std::vector<float> whole(in.size()), tail(5 * 192);
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), 10, 100, whole.data()).ok());
  ASSERT_TRUE(TransformImagesOnHost(t, in.data() + 5 * 192, 5, 105, tail.data()).ok());
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), whole.begin() + 5 * 192));
  t.seed = 1;
  std::vector<float> other(in.size());
  ASSERT_TRUE(TransformImagesOnHost(t, in.data(), 10, 100, other.data()).ok());
  EXPECT_NE(whole, other);
}

TEST(TransformOnHost, RejectsBadParameters) {
  ImageTransform t = Plain(ImageLayout::kCHW, 3, 2, 2);
  t.std = {1, 0, 1};
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, t.Validate().code());
  t.std = {1, 1};
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, t.Validate().code());
  t.std.clear();
  t.height = 0;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, t.Validate().code());
  t.height = 1 << 15;  // 3 x 32768 x 32768: 2^31 bytes or more (32-bit in-image indexing)
  t.width = 1 << 15;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, t.Validate().code());
  t.width = 1 << 14;
  EXPECT_TRUE(t.Validate().ok());
}

// Regression (issue 21, defect 7): more channels than the device kernel
// takes passed the option checks and failed every GPU fill; nan/inf scale and
// means were accepted.
TEST(TransformOnHost, RejectsWhatTheDeviceCannotRunAndNonFiniteNumbers) {
  ImageTransform t = Plain(ImageLayout::kCHW, kMaxTransformChannels, 2, 2);
  EXPECT_TRUE(t.Validate().ok()) << t.Validate();
  t.channels = kMaxTransformChannels + 1;
  absl::Status s = t.Validate();
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, s.code()) << s;
  EXPECT_NE(std::string::npos, s.message().find("at most 8 are supported")) << s;
  t.channels = 3;
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    t.scale = bad;
    s = t.Validate();
    EXPECT_EQ(absl::StatusCode::kInvalidArgument, s.code()) << bad;
    EXPECT_NE(std::string::npos, s.message().find("scale")) << s;
    t.scale = 1;
    t.mean = {0, bad, 0};
    s = t.Validate();
    EXPECT_EQ(absl::StatusCode::kInvalidArgument, s.code()) << bad;
    EXPECT_NE(std::string::npos, s.message().find("mean")) << s;
    t.mean.clear();
  }
}

TEST(GatherOnHost, PicksRowsByIndex) {
  std::vector<uint8_t> table = {0, 0, 1, 1, 2, 2, 3, 3};
  const std::vector<int64_t> idx = {3, 0, 2, 2};
  std::vector<uint8_t> out(8, 0xee);
  GatherRowsOnHost(table.data(), 2, idx.data(), 4, out.data());
  EXPECT_EQ((std::vector<uint8_t>{3, 3, 0, 0, 2, 2, 2, 2}), out);
}

// ---- Device against the reference ------------------------------------------

bool HaveDevice() { return CudaDeviceCount().ok(); }

template <typename T>
absl::StatusOr<std::vector<T>> RunOnDevice(const ImageTransform& t, const std::vector<uint8_t>& in,
                                           int64_t rows, uint64_t first) {
  const size_t out_bytes = rows * t.output_bytes_per_image();
  auto din = DeviceBuffer::Create(in.size());
  auto dout = DeviceBuffer::Create(out_bytes);
  if (!din.ok()) return din.status();
  if (!dout.ok()) return dout.status();
  RETURN_IF_CUDA_ERROR(cudaMemcpy(din->get(), in.data(), in.size(), cudaMemcpyHostToDevice), "h2d");
  RETURN_IF_CUDA_ERROR(cudaMemset(dout->get(), 0xff, out_bytes), "poison");  // NaN everywhere
  RETURN_IF_CUDA_ERROR(LaunchImageTransform(t, static_cast<const uint8_t*>(din->get()), rows, first,
                                            dout->get(), nullptr),
                       "transform launch");
  RETURN_IF_CUDA_ERROR(cudaDeviceSynchronize(), "transform");
  std::vector<T> out(out_bytes / sizeof(T));
  RETURN_IF_CUDA_ERROR(cudaMemcpy(out.data(), dout->get(), out_bytes, cudaMemcpyDeviceToHost), "d2h");
  return out;
}

TEST(TransformOnDevice, MatchesTheHostReference) {
  if (!HaveDevice()) GTEST_SKIP() << "no CUDA device: device-vs-reference comparison skipped";
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "random seed " << seed);
  std::mt19937 rng(seed);
  for (ImageLayout layout : {ImageLayout::kCHW, ImageLayout::kHWC}) {
    for (OutputType type : {OutputType::kFloat32, OutputType::kFloat16, OutputType::kBFloat16}) {
      ImageTransform t;
      t.channels = 3;
      t.height = 32;
      t.width = 32;
      t.layout = layout;
      t.output = type;
      t.mean = {0.4914f, 0.4822f, 0.4465f};
      t.std = {0.2470f, 0.2435f, 0.2616f};
      t.pad = 4;
      t.flip = true;
      t.seed = rng();
      const int64_t rows = 37;
      std::vector<uint8_t> in(rows * t.input_bytes_per_image());
      for (auto& v : in) v = static_cast<uint8_t>(rng());
      const uint64_t first = rng() % 100000;
      if (type == OutputType::kFloat32) {
        std::vector<float> want(in.size());
        ASSERT_TRUE(TransformImagesOnHost(t, in.data(), rows, first, want.data()).ok());
        auto got = RunOnDevice<float>(t, in, rows, first);
        ASSERT_TRUE(got.ok()) << got.status();
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_NEAR(want[i], (*got)[i], 1e-5f * (1 + std::fabs(want[i]))) << i;
        }
      } else {
        std::vector<uint16_t> want(in.size());
        ASSERT_TRUE(TransformImagesOnHost(t, in.data(), rows, first, want.data()).ok());
        auto got = RunOnDevice<uint16_t>(t, in, rows, first);
        ASSERT_TRUE(got.ok()) << got.status();
        for (size_t i = 0; i < want.size(); ++i) {
          // Within one rounding step (FMA contraction may move a tie).
          ASSERT_LE(std::abs(int(want[i]) - int((*got)[i])), 1) << i;
        }
      }
    }
  }
}

// The kernel's grid edges (issue 21 section 4: a 2D grid per image and
// channel, grid-stride over images past gridDim.y's 65535 and over a plane
// wider than the x blocks cover, the crop/flip drawn once per image): float32
// against the reference, every element.
TEST(TransformOnDevice, GridEdgesMatchTheHostReference) {
  if (!HaveDevice()) GTEST_SKIP() << "no CUDA device: device-vs-reference comparison skipped";
  struct Case {
    ImageLayout layout;
    int c, h, w;
    int64_t rows;
  };
  for (const Case& k : {Case{ImageLayout::kCHW, 1, 2, 3, 70000},      // rows > 65535
                        Case{ImageLayout::kHWC, 3, 1, 400000, 2},     // plane > 1024 blocks x 1024
                        Case{ImageLayout::kHWC, 8, 5, 7, 300}}) {     // the most channels
    ImageTransform t;
    t.layout = k.layout;
    t.channels = k.c;
    t.height = k.h;
    t.width = k.w;
    t.pad = 1;
    t.flip = true;
    t.seed = 77;
    std::mt19937 rng(k.rows);
    std::vector<uint8_t> in(k.rows * t.input_bytes_per_image());
    for (auto& v : in) v = static_cast<uint8_t>(rng());
    std::vector<float> want(in.size());
    ASSERT_TRUE(TransformImagesOnHost(t, in.data(), k.rows, 5, want.data()).ok());
    auto got = RunOnDevice<float>(t, in, k.rows, 5);
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(want[i], (*got)[i], 1e-5f * (1 + std::fabs(want[i])))
          << k.c << "x" << k.h << "x" << k.w << " x " << k.rows << " rows, element " << i;
    }
  }
}

TEST(GatherOnDevice, MatchesTheHostReference) {
  if (!HaveDevice()) GTEST_SKIP() << "no CUDA device: device gather comparison skipped";
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "random seed " << seed);
  std::mt19937 rng(seed);
  for (size_t row_bytes : {size_t{1}, size_t{8}, size_t{3072}, size_t{3}}) {
    const int64_t table_rows = 513, rows = 200;
    std::vector<uint8_t> table(table_rows * row_bytes);
    for (auto& v : table) v = static_cast<uint8_t>(rng());
    std::vector<int64_t> idx(rows);
    for (auto& i : idx) i = rng() % table_rows;
    std::vector<uint8_t> want(rows * row_bytes), got(rows * row_bytes);
    GatherRowsOnHost(table.data(), row_bytes, idx.data(), rows, want.data());
    auto dt = DeviceBuffer::Create(table.size());
    auto di = DeviceBuffer::Create(rows * 8);
    auto dout = DeviceBuffer::Create(got.size());
    ASSERT_TRUE(dt.ok() && di.ok() && dout.ok());
    ASSERT_EQ(cudaSuccess, cudaMemcpy(dt->get(), table.data(), table.size(), cudaMemcpyHostToDevice));
    ASSERT_EQ(cudaSuccess, cudaMemcpy(di->get(), idx.data(), rows * 8, cudaMemcpyHostToDevice));
    ASSERT_EQ(cudaSuccess, cudaMemset(dout->get(), 0xa5, got.size()));
    ASSERT_EQ(cudaSuccess, LaunchGatherRows(dt->get(), row_bytes,
                                            static_cast<const int64_t*>(di->get()), rows,
                                            dout->get(), nullptr));
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    ASSERT_EQ(cudaSuccess, cudaMemcpy(got.data(), dout->get(), got.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(want, got) << "row_bytes " << row_bytes;
  }
}

}  // namespace
}  // namespace shardfeed::gpu
