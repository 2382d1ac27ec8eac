#include "reader/device_test_util.h"

#include <cuda_runtime_api.h>

#include "gpu/device.h"
#include "gpu/device_guard.h"

namespace shardfeed {

bool DeviceAvailable(int device) {
  if (device < 0) return true;
  auto count = gpu::CudaDeviceCount();
  return count.ok() && device < *count;
}

std::string DeviceParamName(const ::testing::TestParamInfo<int>& info) {
  return info.param < 0 ? "Host" : "Gpu" + std::to_string(info.param);
}

std::vector<char> HostBytes(const Batch& b, const Tensor& t) {
  std::vector<char> out(t.bytes);
  if (t.bytes == 0) return out;
  if (t.device < 0) {
    std::memcpy(out.data(), t.data, t.bytes);
    return out;
  }
  gpu::ScopedDevice on(t.device);
  EXPECT_TRUE(on.status().ok()) << on.status();
  EXPECT_EQ(cudaSuccess, cudaEventSynchronize(static_cast<cudaEvent_t>(b.cuda_event())));
  EXPECT_EQ(cudaSuccess, cudaMemcpy(out.data(), t.data, t.bytes, cudaMemcpyDeviceToHost));
  return out;
}

HostCopy CopyToHost(const Batch& b) {
  HostCopy copy;
  copy.tensors = b.tensors();
  copy.bytes.reserve(copy.tensors.size());
  for (Tensor& t : copy.tensors) {
    if (t.device < 0) continue;
    copy.bytes.push_back(HostBytes(b, t));
    t.data = copy.bytes.back().data();
    t.device = -1;
  }
  return copy;
}

}  // namespace shardfeed
