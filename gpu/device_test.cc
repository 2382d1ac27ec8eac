// Runs everywhere: with no GPU (CI, this machine) the calls must return
// UNAVAILABLE "no CUDA device" and the device tests skip; on a GPU machine
// they run the kernel.
#include "gpu/device.h"

#include <vector>

#include "gpu/cuda_status.h"
#include "gtest/gtest.h"

namespace shardfeed::gpu {
namespace {

TEST(CudaStatus, MapsErrorsToStatusCodes) {
  EXPECT_TRUE(CudaStatus(cudaSuccess, "x").ok());
  absl::Status s = CudaStatus(cudaErrorNoDevice, "probe", "f.cc", 7);
  EXPECT_EQ(absl::StatusCode::kUnavailable, s.code());
  EXPECT_NE(std::string::npos, s.message().find("no CUDA device: probe: cudaErrorNoDevice"));
  EXPECT_NE(std::string::npos, s.message().find("[f.cc:7]"));
  EXPECT_EQ(absl::StatusCode::kResourceExhausted,
            CudaStatus(cudaErrorMemoryAllocation, "m").code());
}

TEST(Device, CountIsPositiveOrNoDevice) {
  auto count = CudaDeviceCount();
  if (count.ok()) {
    EXPECT_GT(*count, 0);
  } else {
    EXPECT_EQ(absl::StatusCode::kUnavailable, count.status().code()) << count.status();
    EXPECT_NE(std::string::npos, count.status().message().find("no CUDA device"));
  }
}

TEST(Device, FillWithoutDeviceIsAStatusNotACrash) {
  std::vector<unsigned char> host(1000, 0);
  absl::Status s = FillViaDevice(0, 0x5a, host.data(), host.size());
  if (!CudaDeviceCount().ok()) {
    EXPECT_EQ(absl::StatusCode::kUnavailable, s.code()) << s;
  } else {
    EXPECT_TRUE(s.ok()) << s;
  }
}

TEST(Device, KernelFillsBytes) {
  if (!CudaDeviceCount().ok()) GTEST_SKIP() << "no CUDA device";
  std::vector<unsigned char> host(1 << 20, 0);
  ASSERT_TRUE(FillViaDevice(0, 0x5a, host.data(), host.size()).ok());
  for (unsigned char b : host) ASSERT_EQ(0x5a, b);
  auto description = DescribeDevice(0);
  ASSERT_TRUE(description.ok());
  EXPECT_NE(std::string::npos, description->find("compute capability"));
}

}  // namespace
}  // namespace shardfeed::gpu
