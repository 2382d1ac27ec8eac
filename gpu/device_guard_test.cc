// ScopedDevice restores the caller's device (needs a GPU; skips without).
#include "gpu/device_guard.h"

#include <cuda.h>
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

// The driver's context calls a caller like PyCUDA makes (through the
// runtime's entry point: no link to libcuda). ok() false where the driver
// does not offer them.
struct DriverContexts {
  CUresult (*create)(CUcontext*, CUctxCreateParams*, unsigned int, CUdevice) = nullptr;
  CUresult (*get)(CUcontext*) = nullptr;
  CUresult (*destroy)(CUcontext) = nullptr;
  DriverContexts() {
    void* fn[3] = {nullptr, nullptr, nullptr};
    cudaDriverEntryPointQueryResult q;
    (void)cudaGetDriverEntryPointByVersion("cuCtxCreate", &fn[0], 13000, cudaEnableDefault, &q);
    (void)cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn[1], 12000, cudaEnableDefault, &q);
    (void)cudaGetDriverEntryPointByVersion("cuCtxDestroy", &fn[2], 12000, cudaEnableDefault, &q);
    create = reinterpret_cast<decltype(create)>(fn[0]);
    get = reinterpret_cast<decltype(get)>(fn[1]);
    destroy = reinterpret_cast<decltype(destroy)>(fn[2]);
  }
  bool ok() const { return create != nullptr && get != nullptr && destroy != nullptr; }
};

// Review of defect 9's fix: a caller's own context (cuCtxCreate) current on
// `ordinal` itself made cudaGetDevice say `ordinal`, and the guard returned
// early: the library's streams, events and allocations went into the
// caller's context. Now the work runs in the primary context and the
// caller's own context is current again afterwards.
TEST(ScopedDevice, LeavesTheCallersOwnContextOnTheSameDevice) {
  auto count = CudaDeviceCount();
  if (!count.ok()) GTEST_SKIP() << count.status();
  DriverContexts driver;
  ASSERT_TRUE(driver.ok());
  std::thread t([&] {
    CUcontext own = nullptr;
    ASSERT_EQ(CUDA_SUCCESS, driver.create(&own, nullptr, 0, 0));
    CUcontext inside = nullptr;
    {
      ScopedDevice on(0);
      ASSERT_TRUE(on.status().ok()) << on.status();
      ASSERT_EQ(CUDA_SUCCESS, driver.get(&inside));
    }
    EXPECT_NE(own, inside) << "the library ran inside the caller's own context";
    CUcontext after = nullptr;
    ASSERT_EQ(CUDA_SUCCESS, driver.get(&after));
    EXPECT_EQ(own, after) << "the caller's own context was not restored";
    EXPECT_EQ(CUDA_SUCCESS, driver.destroy(own));
  });
  t.join();
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

// Regression (issue 21, defect 9): a caller with its own context (PyCUDA's
// cuCtxCreate) got the device's primary context back, not its own: the
// guard restored with cudaSetDevice.
TEST(ScopedDevice, RestoresTheCallersOwnContext) {
  auto count = CudaDeviceCount();
  if (!count.ok() || *count < 2) GTEST_SKIP() << "needs two CUDA devices";
  DriverContexts driver;
  ASSERT_TRUE(driver.ok());
  std::thread t([&] {
    CUcontext own = nullptr;
    ASSERT_EQ(CUDA_SUCCESS, driver.create(&own, nullptr, 0, 1));
    {
      ScopedDevice on(0);
      ASSERT_TRUE(on.status().ok()) << on.status();
      int current = -1;
      ASSERT_EQ(cudaSuccess, cudaGetDevice(&current));
      EXPECT_EQ(0, current);
    }
    CUcontext after = nullptr;
    ASSERT_EQ(CUDA_SUCCESS, driver.get(&after));
    EXPECT_EQ(own, after) << "the caller's context was replaced by device 1's primary context";
    EXPECT_EQ(CUDA_SUCCESS, driver.destroy(own));
  });
  t.join();
}

}  // namespace
}  // namespace shardfeed::gpu
