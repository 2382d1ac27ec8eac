// ScopedDevice restores the caller's device (needs a GPU; skips without).
#include "gpu/device_guard.h"

#include <cuda_runtime_api.h>

#include <thread>

#include "gpu/device.h"
#include "gtest/gtest.h"

namespace shardfeed::gpu {
namespace {

TEST(ScopedDevice, NegativeOrdinalDoesNothing) {
  ScopedDevice none(-1);
  EXPECT_TRUE(none.status().ok());
}

// Regression (finding 2): a thread without a context reads device 0 and
// must not be "restored" to it (that creates GPU 0's context on every rank).
TEST(ScopedDevice, RestoresOnlyAnExplicitOtherDevice) {
  EXPECT_FALSE(ShouldRestoreDevice(/*thread_had_context=*/false, 0, 3));
  EXPECT_TRUE(ShouldRestoreDevice(true, 0, 3));
  EXPECT_FALSE(ShouldRestoreDevice(true, 3, 3));
  EXPECT_FALSE(ShouldRestoreDevice(true, -1, 3));
}

TEST(ScopedDevice, FreshThreadStaysOnTheRequestedDevice) {
  auto count = CudaDeviceCount();
  if (!count.ok()) GTEST_SKIP() << count.status();
  const int last = *count - 1;
  int after = -1;
  bool had = true;
  std::thread t([&] {
    had = ThreadHasCurrentContext();
    { ScopedDevice on(last); }
    (void)cudaGetDevice(&after);
  });
  t.join();
  EXPECT_FALSE(had);
  EXPECT_EQ(last, after);
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
