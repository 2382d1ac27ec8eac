#include "reader/device_copy.h"

#include <cuda_runtime_api.h>

#include "gpu/cuda_status.h"
#include "gpu/device_guard.h"
#include "gpu/image_transform_kernel.h"
#include "record/status_macros.h"

namespace shardfeed {

absl::Status FinishSlot(SlotRing* ring, SlotRing::Slot* s, int64_t rows, uint64_t first_sample) {
  const SlotLayout& l = ring->layout();
  DeviceContext* ctx = ring->context();
  if (ctx == nullptr) {
    for (size_t f = 0; f < l.features.size(); ++f) {
      if (!l.present[f] || l.transform_of[f] < 0) continue;
      RETURN_IF_ERROR(gpu::TransformImagesOnHost(
          l.transforms[l.transform_of[f]].transform,
          reinterpret_cast<const uint8_t*>(s->rows_host[f]), rows, first_sample,
          s->transformed_host[f].data()));
    }
    return absl::OkStatus();
  }
  gpu::ScopedDevice on(ctx->ordinal);
  RETURN_IF_ERROR(on.status());
  cudaStream_t stream = ctx->stream.get();
  RETURN_IF_CUDA_ERROR(cudaEventRecord(s->copy_start.get(), stream), "cudaEventRecord");
  for (size_t f = 0; f < l.features.size(); ++f) {
    const FeatureSpec& spec = l.features[f];
    if (!l.present[f] || spec.variable_length) continue;
    RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(s->device[f].get(), s->rows_host[f],
                                         rows * spec.row_bytes(), cudaMemcpyHostToDevice, stream),
                         "cudaMemcpyAsync host to device");
    if (l.transform_of[f] >= 0) {
      RETURN_IF_CUDA_ERROR(
          gpu::LaunchImageTransform(l.transforms[l.transform_of[f]].transform,
                                    static_cast<const uint8_t*>(s->device[f].get()), rows,
                                    first_sample, s->transformed_device[f].get(), stream),
          "image transform kernel launch");
    }
  }
  RETURN_IF_CUDA_ERROR(cudaEventRecord(s->ready.get(), stream), "cudaEventRecord");
  s->copy_recorded = true;
  return absl::OkStatus();
}

double LastCopySeconds(SlotRing::Slot* s) {
  float ms = 0;
  if (!s->copy_recorded ||
      cudaEventElapsedTime(&ms, s->copy_start.get(), s->ready.get()) != cudaSuccess) {
    return 0;
  }
  return ms / 1e3;
}

}  // namespace shardfeed
