#include "reader/decode/crop_geometry.h"

#include <algorithm>
#include <cmath>

#include "gpu/augment_rng.h"

namespace shardfeed {
namespace {

// Python's round(): half to even (the default floating-point rounding mode).
int RoundHalfEven(double x) { return static_cast<int>(std::nearbyint(x)); }

// random.randint-style integer in [0, n).
int UniformInt(SampleStream* stream, int n) {
  return n <= 1 ? 0 : static_cast<int>(stream->Next() % static_cast<uint64_t>(n));
}

}  // namespace

SampleStream::SampleStream(uint64_t seed, uint64_t sample)
    : base_(gpu::SplitMix64(seed ^ gpu::SplitMix64(sample ^ 0x64ec0de5a1e5ull))) {}

uint64_t SampleStream::Next() { return gpu::SplitMix64(base_ + 0x9e3779b97f4a7c15ull * ++k_); }

double SampleStream::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

CropBox RandomResizedCropBox(int width, int height, const ImageDecodeSpec& spec,
                             SampleStream* stream) {
  CropBox box;
  const double area = static_cast<double>(width) * height;
  const double log_lo = std::log(spec.ratio_min), log_hi = std::log(spec.ratio_max);
  bool found = false;
  for (int attempt = 0; attempt < 10 && !found; ++attempt) {
    const double target =
        area * (spec.scale_min + (spec.scale_max - spec.scale_min) * stream->Uniform());
    const double aspect = std::exp(log_lo + (log_hi - log_lo) * stream->Uniform());
    const int w = RoundHalfEven(std::sqrt(target * aspect));
    const int h = RoundHalfEven(std::sqrt(target / aspect));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int y = UniformInt(stream, height - h + 1);
      const int x = UniformInt(stream, width - w + 1);
      box = {double(x), double(y), double(x + w), double(y + h)};
      found = true;
    }
  }
  if (!found) {  // center crop, clamped to the ratio range
    const double in_ratio = static_cast<double>(width) / height;
    int w = width, h = height;
    if (in_ratio < spec.ratio_min) {
      h = RoundHalfEven(w / spec.ratio_min);
    } else if (in_ratio > spec.ratio_max) {
      w = RoundHalfEven(h * spec.ratio_max);
    }
    w = std::clamp(w, 1, width);
    h = std::clamp(h, 1, height);
    const int y = (height - h) / 2, x = (width - w) / 2;
    box = {double(x), double(y), double(x + w), double(y + h)};
  }
  box.flip = spec.flip && (stream->Next() >> 63);
  return box;
}

CropBox ResizeCenterCropBox(int width, int height, int resize, int out_w, int out_h) {
  double rw = width, rh = height;  // the resized image's size
  if (resize > 0) {
    const bool wide = width >= height;
    const int shorter = wide ? height : width, longer = wide ? width : height;
    const double new_long = static_cast<int>(static_cast<double>(resize) * longer / shorter);
    rw = wide ? new_long : resize;
    rh = wide ? resize : new_long;
  }
  const double cw = std::min<double>(out_w, rw), ch = std::min<double>(out_h, rh);
  const double top = RoundHalfEven((rh - ch) / 2.0), left = RoundHalfEven((rw - cw) / 2.0);
  const double sx = width / rw, sy = height / rh;
  return CropBox{left * sx, top * sy, (left + cw) * sx, (top + ch) * sy, false};
}

CropBox BoxFor(int width, int height, const ImageDecodeSpec& spec, uint64_t seed,
               uint64_t sample) {
  switch (spec.mode) {
    case ImageMode::kRandomResizedCrop: {
      SampleStream stream(seed, sample);
      return RandomResizedCropBox(width, height, spec, &stream);
    }
    case ImageMode::kResizeCenterCrop:
      return ResizeCenterCropBox(width, height, spec.resize, spec.out_w, spec.out_h);
    case ImageMode::kResize:
      break;
  }
  return CropBox{0, 0, double(width), double(height), false};
}

}  // namespace shardfeed
