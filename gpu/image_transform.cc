#include "gpu/image_transform.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "gpu/augment_rng.h"

namespace shardfeed::gpu {

size_t OutputTypeSize(OutputType t) { return t == OutputType::kFloat32 ? 4 : 2; }

const char* OutputTypeName(OutputType t) {
  switch (t) {
    case OutputType::kFloat32:
      return "float32";
    case OutputType::kFloat16:
      return "float16";
    case OutputType::kBFloat16:
      return "bfloat16";
  }
  return "?";
}

absl::Status ImageTransform::Validate() const {
  if (channels < 1 || height < 1 || width < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("image transform: bad image shape ", channels, "x", height, "x", width));
  }
  if (int64_t{channels} * height * width > 0x7fffffff) {  // the kernel indexes an image in 32 bits
    return absl::InvalidArgumentError(absl::StrCat("image transform: a ", channels, "x", height,
                                                   "x", width, " image is 2^31 bytes or more"));
  }
  if (channels > kMaxTransformChannels) {
    return absl::InvalidArgumentError(absl::StrCat("image transform: ", channels,
                                                   " channels, at most ", kMaxTransformChannels,
                                                   " are supported"));
  }
  if (!std::isfinite(scale)) {
    return absl::InvalidArgumentError(absl::StrCat("image transform: scale ", scale,
                                                   " is not a finite number"));
  }
  for (float m : mean) {
    if (!std::isfinite(m)) {
      return absl::InvalidArgumentError(absl::StrCat("image transform: mean ", m,
                                                     " is not a finite number"));
    }
  }
  if (!mean.empty() && static_cast<int>(mean.size()) != channels) {
    return absl::InvalidArgumentError(absl::StrCat("image transform: ", mean.size(),
                                                   " means for ", channels, " channels"));
  }
  if (!std.empty() && static_cast<int>(std.size()) != channels) {
    return absl::InvalidArgumentError(absl::StrCat("image transform: ", std.size(),
                                                   " stds for ", channels, " channels"));
  }
  for (float s : std) {
    if (!(s > 0) || !std::isfinite(s)) {
      return absl::InvalidArgumentError(absl::StrCat("image transform: std ", s, " is not > 0"));
    }
  }
  if (pad < 0 || pad > 0x7fff) {
    return absl::InvalidArgumentError(absl::StrCat("image transform: pad ", pad));
  }
  return absl::OkStatus();
}

void NormalizationCoefficients(const ImageTransform& t, std::vector<float>* a,
                               std::vector<float>* b) {
  a->assign(t.channels, 0);
  b->assign(t.channels, 0);
  for (int c = 0; c < t.channels; ++c) {
    const float m = t.mean.empty() ? 0.0f : t.mean[c];
    const float s = t.std.empty() ? 1.0f : t.std[c];
    (*a)[c] = t.scale / s;
    (*b)[c] = -m / s;
  }
}

namespace {
uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t u = Bits(f);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  const uint32_t bias = 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>((u + bias) >> 16);
}

float BFloat16BitsToFloat(uint16_t h) { return FromBits(uint32_t{h} << 16); }

uint16_t FloatToHalfBits(float f) {
  const uint32_t u = Bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t abs = u & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00;          // NaN
  if (abs >= 0x477ff000) return sign | 0x7c00;         // rounds to >= 65520: inf
  const int exp = static_cast<int>(abs >> 23) - 127;   // unbiased
  if (exp >= -14) {                                    // normal half
    uint32_t mant = abs & 0x7fffff;
    uint32_t h = (static_cast<uint32_t>(exp + 15) << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // carries into the exponent
    return sign | static_cast<uint16_t>(h);
  }
  if (exp < -25) return sign;  // below half the smallest subnormal: zero
  // Subnormal half: value = m * 2^-24 with m < 1024.
  const uint32_t mant = (abs & 0x7fffff) | 0x800000;  // 24 bits, value = mant * 2^(exp-23)
  const int shift = -exp - 1;                         // 14..24: mant >> shift = m
  uint32_t h = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1))) ++h;
  return sign | static_cast<uint16_t>(h);
}

float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return FromBits(sign | 0x7f800000 | (mant << 13));
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return FromBits(sign | (static_cast<uint32_t>(exp - 15 + 127) << 23) | (mant << 13));
}

absl::Status TransformImagesOnHost(const ImageTransform& t, const uint8_t* in, int64_t rows,
                                   uint64_t first_sample, void* out) {
  if (absl::Status s = t.Validate(); !s.ok()) return s;
  std::vector<float> a, b;
  NormalizationCoefficients(t, &a, &b);
  const int C = t.channels, H = t.height, W = t.width;
  const size_t image = t.input_bytes_per_image();
  for (int64_t n = 0; n < rows; ++n) {
    const uint8_t* src = in + n * image;
    const SampleAugment aug = AugmentFor(t.seed, first_sample + n, t.pad, t.flip);
    for (int c = 0; c < C; ++c) {
      for (int y = 0; y < H; ++y) {
        for (int x = 0; x < W; ++x) {
          const int sy = y + aug.dy;
          const int sx = (aug.flip ? W - 1 - x : x) + aug.dx;
          uint8_t v = 0;
          if (sy >= 0 && sy < H && sx >= 0 && sx < W) {
            v = t.layout == ImageLayout::kCHW ? src[(size_t(c) * H + sy) * W + sx]
                                              : src[(size_t(sy) * W + sx) * C + c];
          }
          const float f = static_cast<float>(v) * a[c] + b[c];
          const size_t o = ((size_t(n) * C + c) * H + y) * W + x;
          switch (t.output) {
            case OutputType::kFloat32:
              static_cast<float*>(out)[o] = f;
              break;
            case OutputType::kFloat16:
              static_cast<uint16_t*>(out)[o] = FloatToHalfBits(f);
              break;
            case OutputType::kBFloat16:
              static_cast<uint16_t*>(out)[o] = FloatToBFloat16Bits(f);
              break;
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace shardfeed::gpu
