// Runs everywhere: with no GPU (CI, this machine) the calls must return
// UNAVAILABLE "no CUDA device" and the device tests skip; on a GPU machine
// they run the kernel.
#include "gpu/device.h"

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
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

// Regression (issue 21, defect 1): a driver that cannot run this build was
// "no CUDA device" (UNAVAILABLE), so device=0 silently became host memory.
// Only cudaErrorNoDevice (and no driver installed at all) may fall back.
TEST(CudaStatus, DriverFaultsAreErrorsNamingTheCudaVersions) {
  for (cudaError_t e : {cudaErrorInitializationError, cudaErrorDevicesUnavailable}) {
    absl::Status s = CudaStatus(e, "cudaGetDeviceCount");
    EXPECT_EQ(absl::StatusCode::kFailedPrecondition, s.code()) << s;
    EXPECT_EQ(std::string::npos, s.message().find("no CUDA device")) << s;
    EXPECT_NE(std::string::npos, s.message().find("this build's CUDA runtime is 13.")) << s;
  }
  absl::Status s = CudaStatus(cudaErrorInsufficientDriver, "cudaGetDeviceCount");
  if (CudaDriverVersion() == 0) {  // this machine has no driver at all: no GPU
    EXPECT_EQ(absl::StatusCode::kUnavailable, s.code()) << s;
    EXPECT_NE(std::string::npos, s.message().find("no NVIDIA driver is installed")) << s;
  } else {
    EXPECT_EQ(absl::StatusCode::kFailedPrecondition, s.code()) << s;
    EXPECT_NE(std::string::npos,
              s.message().find(absl::StrCat("the NVIDIA driver supports CUDA ",
                                            CudaVersionText(CudaDriverVersion()))))
        << s;
  }
  EXPECT_EQ("12.4", CudaVersionText(12040));
  EXPECT_EQ("13.0", CudaVersionText(13000));
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

// Regression (issue 21, defect 11): FillViaDevice left the caller's thread
// on the device it probed.
TEST(Device, FillKeepsTheCallersDevice) {
  auto count = CudaDeviceCount();
  if (!count.ok() || *count < 2) GTEST_SKIP() << "needs two CUDA devices";
  std::thread t([&] {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
    std::vector<unsigned char> host(4096, 0);
    ASSERT_TRUE(FillViaDevice(0, 0x33, host.data(), host.size()).ok());
    EXPECT_EQ(0x33, host[4095]);
    int current = -1;
    ASSERT_EQ(cudaSuccess, cudaGetDevice(&current));
    EXPECT_EQ(1, current);
  });
  t.join();
}

}  // namespace
}  // namespace shardfeed::gpu
