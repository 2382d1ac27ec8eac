// gpu_device_info: lists CUDA devices, or says plainly that there is none
// (exit 0 either way; a probe, not a check).
#include <cstdio>

#include "gpu/device.h"

int main() {
  auto count = shardfeed::gpu::CudaDeviceCount();
  if (!count.ok()) {
    std::printf("%s\n", std::string(count.status().message()).c_str());
    return 0;
  }
  for (int i = 0; i < *count; ++i) {
    auto d = shardfeed::gpu::DescribeDevice(i);
    std::printf("%s\n", d.ok() ? d->c_str() : std::string(d.status().message()).c_str());
  }
  return 0;
}
