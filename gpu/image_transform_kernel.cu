#include "gpu/image_transform_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
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

// A 2D grid per image and channel: blockIdx.z is the channel, blockIdx.y
// walks the images (grid-stride over rows), x the pixels of one H x W plane
// (grid-stride, a few pixels per thread). Each thread draws an image's
// crop/flip once (AugmentFor is a hash: not per element), indexes inside an
// image in 32 bits (Validate() keeps C*H*W < 2^31) and only the image's
// base in 64.
template <typename Out>
SHARDFEED_HOST_DEVICE inline void TransformThread(const KernelThread& t, Params p,
                                                  const uint8_t* __restrict__ in, int64_t rows,
                                                  Out* __restrict__ out) {
  const int c = static_cast<int>(t.block.z);
  const int plane = p.H * p.W;
  const int first = static_cast<int>(t.block.x * t.block_dim.x + t.thread.x);
  const int stride = static_cast<int>(t.grid_dim.x * t.block_dim.x);
  if (first >= plane) return;
  const float a = p.a[c], b = p.b[c];
  const int image = p.C * plane;
  for (int64_t n = t.block.y; n < rows; n += t.grid_dim.y) {
    const SampleAugment aug = AugmentFor(p.seed, p.first_sample + n, p.pad, p.flip);
    const uint8_t* src = in + n * image;
    Out* dst = out + n * image + c * plane;
    for (int i = first; i < plane; i += stride) {
      const int y = i / p.W;
      const int x = i - y * p.W;
      const int sy = y + aug.dy;
      const int sx = (aug.flip ? p.W - 1 - x : x) + aug.dx;
      uint8_t v = 0;
      if (sy >= 0 && sy < p.H && sx >= 0 && sx < p.W) {
        v = p.hwc ? src[(sy * p.W + sx) * p.C + c] : src[(c * p.H + sy) * p.W + sx];
      }
      dst[i] = Convert<Out>(static_cast<float>(v) * a + b);
    }
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

// The grid: x covers one image plane with about kPixelsPerThread pixels a
// thread (at most 1024 blocks), y the images (at most 65535, grid-stride),
// z the channels (kMaxTransformChannels <= 64, the limit of gridDim.z).
// cudaLaunchKernel returns this launch's error; cudaGetLastError after a
// <<<>>> launch would return an earlier failure of the calling thread that
// its caller chose to ignore.
static_assert(kMaxTransformChannels <= 64, "gridDim.z holds the channels");
constexpr int kThreads = 256, kPixelsPerThread = 4;

template <typename Out>
cudaError_t Launch(Params p, const uint8_t* in, int64_t rows, void* out, cudaStream_t stream) {
  const int64_t plane = int64_t{p.H} * p.W;
  const int64_t per_block = int64_t{kThreads} * kPixelsPerThread;
  const int64_t x_blocks = std::min<int64_t>((plane + per_block - 1) / per_block, 1024);
  const dim3 grid(static_cast<unsigned>(x_blocks),
                  static_cast<unsigned>(std::min<int64_t>(rows, 65535)),
                  static_cast<unsigned>(p.C));
  Out* o = static_cast<Out*>(out);
  void* args[] = {&p, &in, &rows, &o};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&TransformKernel<Out>), grid,
                          dim3(kThreads), args, 0, stream);
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
