#include "gpu/image_transform_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <vector>

#include "gpu/augment_rng.h"
#include "gpu/host_kernel.h"

namespace shardfeed::gpu {
namespace {

struct Params {
  int C, H, W, pad;
  bool flip, hwc;
  uint64_t seed, first_sample;
  float a[kMaxTransformChannels], b[kMaxTransformChannels];
};

template <typename Out>
SHARDFEED_HOST_DEVICE inline Out Convert(float f);
template <>
SHARDFEED_HOST_DEVICE inline float Convert<float>(float f) { return f; }
template <>
SHARDFEED_HOST_DEVICE inline __half Convert<__half>(float f) { return __float2half_rn(f); }
template <>
SHARDFEED_HOST_DEVICE inline __nv_bfloat16 Convert<__nv_bfloat16>(float f) { return __float2bfloat16_rn(f); }

// One thread per output element (n, c, y, x), grid-stride.
template <typename Out>
SHARDFEED_HOST_DEVICE inline void TransformThread(const KernelThread& t, Params p,
                                                  const uint8_t* __restrict__ in, int64_t rows,
                                                  Out* __restrict__ out) {
  const int64_t per_image = int64_t{p.C} * p.H * p.W;
  const int64_t total = rows * per_image;
  for (int64_t i = t.global_x(); i < total; i += t.stride_x()) {
    const int64_t n = i / per_image;
    int64_t r = i - n * per_image;
    const int c = static_cast<int>(r / (int64_t{p.H} * p.W));
    r -= int64_t{c} * p.H * p.W;
    const int y = static_cast<int>(r / p.W);
    const int x = static_cast<int>(r - int64_t{y} * p.W);
    const SampleAugment aug = AugmentFor(p.seed, p.first_sample + n, p.pad, p.flip);
    const int sy = y + aug.dy;
    const int sx = (aug.flip ? p.W - 1 - x : x) + aug.dx;
    uint8_t v = 0;
    if (sy >= 0 && sy < p.H && sx >= 0 && sx < p.W) {
      const uint8_t* src = in + n * per_image;
      v = p.hwc ? src[(int64_t{sy} * p.W + sx) * p.C + c] : src[(int64_t{c} * p.H + sy) * p.W + sx];
    }
    out[i] = Convert<Out>(static_cast<float>(v) * p.a[c] + p.b[c]);
  }
}

template <typename Out>
__global__ void TransformKernel(Params p, const uint8_t* __restrict__ in, int64_t rows,
                                Out* __restrict__ out) {
  TransformThread<Out>(KernelThread::Current(), p, in, rows, out);
}
SHARDFEED_HOST_KERNEL(TransformKernel<float>, TransformThread<float>);
SHARDFEED_HOST_KERNEL(TransformKernel<__half>, TransformThread<__half>);
SHARDFEED_HOST_KERNEL(TransformKernel<__nv_bfloat16>, TransformThread<__nv_bfloat16>);

// cudaLaunchKernel returns this launch's error; cudaGetLastError after a
// <<<>>> launch would return an earlier failure of the calling thread that
// its caller chose to ignore.
template <typename Out>
cudaError_t Launch(Params p, const uint8_t* in, int64_t rows, void* out, cudaStream_t stream) {
  const int64_t total = rows * p.C * p.H * p.W;
  const int threads = 256;
  const int64_t wanted = (total + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 65535 * 4 ? wanted : 65535 * 4);
  Out* o = static_cast<Out*>(out);
  void* args[] = {&p, &in, &rows, &o};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&TransformKernel<Out>), dim3(blocks),
                          dim3(threads), args, 0, stream);
}

}  // namespace

cudaError_t LaunchImageTransform(const ImageTransform& t, const uint8_t* in, int64_t rows,
                                 uint64_t first_sample, void* out, cudaStream_t stream) {
  if (!t.Validate().ok()) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  Params p;
  p.C = t.channels;
  p.H = t.height;
  p.W = t.width;
  p.pad = t.pad;
  p.flip = t.flip;
  p.hwc = t.layout == ImageLayout::kHWC;
  p.seed = t.seed;
  p.first_sample = first_sample;
  std::vector<float> a, b;
  NormalizationCoefficients(t, &a, &b);
  for (int c = 0; c < t.channels; ++c) {
    p.a[c] = a[c];
    p.b[c] = b[c];
  }
  switch (t.output) {
    case OutputType::kFloat32:
      return Launch<float>(p, in, rows, out, stream);
    case OutputType::kFloat16:
      return Launch<__half>(p, in, rows, out, stream);
    case OutputType::kBFloat16:
      return Launch<__nv_bfloat16>(p, in, rows, out, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace shardfeed::gpu
