// ScopedDevice restores the caller's device (needs a GPU; skips without).
#include "gpu/device_guard.h"

#include <cuda_runtime_api.h>

#include "gpu/device.h"
#include "gtest/gtest.h"

namespace shardfeed::gpu {
namespace {

TEST(ScopedDevice, NegativeOrdinalDoesNothing) {
  ScopedDevice none(-1);
  EXPECT_TRUE(none.status().ok());
}

TEST(ScopedDevice, RestoresTheCallersDevice) {
  auto count = CudaDeviceCount();
  if (!count.ok()) GTEST_SKIP() << count.status();
  const int last = *count - 1;
  ASSERT_EQ(cudaSuccess, cudaSetDevice(last));
  {
    ScopedDevice on(0);
    ASSERT_TRUE(on.status().ok()) << on.status();
    int current = -1;
    ASSERT_EQ(cudaSuccess, cudaGetDevice(&current));
    EXPECT_EQ(0, current);
  }
  int current = -1;
  ASSERT_EQ(cudaSuccess, cudaGetDevice(&current));
  EXPECT_EQ(last, current);
  ScopedDevice bad(*count);  // no such device: an error, and nothing changed
  EXPECT_FALSE(bad.status().ok());
}

}  // namespace
}  // namespace shardfeed::gpu
