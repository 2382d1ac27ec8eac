// The per-sample augmentation stream shared by the host reference and the
// CUDA kernel (compiled by both g++ and nvcc): a counter-based hash of
// (seed, sample number), so a sample's crop and flip never depend on which
// thread, block or batch handles it.
#ifndef SHARDFEED_GPU_AUGMENT_RNG_H_
#define SHARDFEED_GPU_AUGMENT_RNG_H_

#include <cstdint>

#include "gpu/host_device.h"

namespace shardfeed::gpu {

struct SampleAugment {
  int dy = 0, dx = 0;  // crop offset, each in [-pad, pad]
  bool flip = false;   // horizontal flip
};

SHARDFEED_HOST_DEVICE inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

SHARDFEED_HOST_DEVICE inline SampleAugment AugmentFor(uint64_t seed, uint64_t sample, int pad,
                                                      bool flip) {
  const uint64_t h = SplitMix64(seed ^ SplitMix64(sample));
  SampleAugment a;
  const uint64_t span = 2 * static_cast<uint64_t>(pad) + 1;
  a.dy = static_cast<int>((h & 0xffff) % span) - pad;
  a.dx = static_cast<int>(((h >> 16) & 0xffff) % span) - pad;
  a.flip = flip && ((h >> 40) & 1);
  return a;
}

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_AUGMENT_RNG_H_
