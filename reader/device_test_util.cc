#include "reader/device_test_util.h"

#include <cuda_runtime_api.h>

#include <cstdlib>

#include "gpu/device.h"
#include "gpu/device_guard.h"

namespace shardfeed {

bool GpuRequired() {
  const char* v = std::getenv("SHARDFEED_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

bool DeviceAvailable(int device) {
  if (device < 0) return true;
  auto count = gpu::CudaDeviceCount();
  const bool available = count.ok() && device < *count;
  if (!available && GpuRequired()) {
    ADD_FAILURE() << "SHARDFEED_REQUIRE_GPU=1 but GPU " << device << " is not available ("
                  << (count.ok() ? std::to_string(*count) + " CUDA devices"
                                 : std::string(count.status().message()))
                  << ")";
  }
  return available;
}

bool FellBackToHost(const Loader& loader) {
  if (loader.device() >= 0) return false;
  if (GpuRequired()) {
    ADD_FAILURE() << "SHARDFEED_REQUIRE_GPU=1 but the loader fell back to host memory: "
                  << loader.device_note();
  }
  return true;
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
