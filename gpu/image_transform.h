// ImageTransform: what the fused on-device transform does to a batch of
// uint8 images, and its host reference implementation.
//
// For each image n of a batch (uint8, layout kCHW such as CIFAR's planar
// [3,32,32], or kHWC such as decoded JPEGs), the output is NCHW in float32,
// float16 or bfloat16:
//   out[n][c][y][x] = (in(n, c, y + dy, x' + dx) * scale - mean[c]) / std[c]
// with x' = W-1-x when the image is flipped (else x), and in(...) = 0 (a
// zero pixel, as torchvision's RandomCrop(padding=pad) pads) outside the
// image. dy, dx in [-pad, pad] and the flip come from AugmentFor(seed,
// sample) (gpu/augment_rng.h), a counter-based stream: the same sample
// number gives the same crop on the host and on the device, whatever the
// thread or batch layout. pad = 0 and flip = false: no augmentation.
//
// float16 and bfloat16 are rounded to nearest even. The reference is
// plain, single-threaded C++; the device kernel (image_transform_kernel.h)
// must match it (exactly in float32 up to FMA contraction, within one
// rounding step for float16/bfloat16); tests compare the two.
#ifndef SHARDFEED_GPU_IMAGE_TRANSFORM_H_
#define SHARDFEED_GPU_IMAGE_TRANSFORM_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace shardfeed::gpu {

enum class ImageLayout { kCHW, kHWC };

// The most channels a transform takes: the device kernel passes the
// per-channel coefficients by value (Validate() rejects more, so a
// transform that passes the option checks runs on the host and the device).
constexpr int kMaxTransformChannels = 8;
enum class OutputType { kFloat32, kFloat16, kBFloat16 };

size_t OutputTypeSize(OutputType t);
const char* OutputTypeName(OutputType t);

struct ImageTransform {
  ImageLayout layout = ImageLayout::kCHW;
  // Image size. All 0 (the default): taken from the feature's shape when
  // the Loader matches the transform to its feature.
  int channels = 0, height = 0, width = 0;
  OutputType output = OutputType::kFloat32;
  float scale = 1.0f / 255.0f;
  std::vector<float> mean;  // per channel; empty: 0
  std::vector<float> std;   // per channel; empty: 1
  int pad = 0;              // random crop with this much zero padding
  bool flip = false;        // random horizontal flip
  uint64_t seed = 0;

  size_t input_bytes_per_image() const { return size_t(channels) * height * width; }
  size_t output_bytes_per_image() const {
    return input_bytes_per_image() * OutputTypeSize(output);
  }
  // INVALID_ARGUMENT when sizes (channels in [1, kMaxTransformChannels],
  // channels * height * width < 2^31),
  // mean/std lengths, std values (finite, > 0), scale or means (finite) are
  // wrong.
  absl::Status Validate() const;
};

// Per-channel a, b with out = in * a[c] + b[c] (a = scale/std, b = -mean/std):
// the one formula both implementations use.
void NormalizationCoefficients(const ImageTransform& t, std::vector<float>* a,
                               std::vector<float>* b);

// Round-to-nearest-even conversions, bit patterns.
uint16_t FloatToHalfBits(float f);
uint16_t FloatToBFloat16Bits(float f);
float HalfBitsToFloat(uint16_t h);
float BFloat16BitsToFloat(uint16_t h);

// The host reference: `rows` images at `in` -> `out` (rows *
// output_bytes_per_image() bytes). Image i is sample number first_sample + i.
absl::Status TransformImagesOnHost(const ImageTransform& t, const uint8_t* in, int64_t rows,
                                   uint64_t first_sample, void* out);

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_IMAGE_TRANSFORM_H_
