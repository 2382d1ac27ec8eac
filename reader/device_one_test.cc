// A loader on GPU 1 never touches GPU 0 (every rank of a job would
// otherwise create a context on the first GPU) and leaves its caller's
// current device as it was: reading on every path, copying batches back,
// releasing them with and without streams and from another thread. Needs
// two CUDA devices (skips with fewer); device_one_test_emu runs it on the
// emulator's two GPUs. One test per process: GPU 0's primary context must
// not exist when it starts.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <thread>

#include "gpu/device.h"
#include "gtest/gtest.h"
#include "reader/device_test_util.h"
#include "reader/feature_transforms.h"
#include "reader/id_dataset_test_util.h"
#include "reader/loader.h"

namespace shardfeed {
namespace {

// Whether device 0's primary context exists (cuDevicePrimaryCtxGetState
// through the runtime's driver entry point); -1 if the driver cannot say.
int PrimaryContextActive(int device) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &fn, 12000,
                                       cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    return -1;
  }
  unsigned flags = 0;
  int active = 0;
  auto get = reinterpret_cast<CUresult (*)(CUdevice, unsigned*, int*)>(fn);
  return get(device, &flags, &active) == CUDA_SUCCESS ? active : -1;
}

// Reads every batch on GPU 1 (ids checked through host copies), releasing
// them in turn with no stream, a stream of GPU 1, and from another thread.
void ReadOnGpu1(const std::string& dir, bool streaming, bool cached) {
  SCOPED_TRACE(streaming ? "streaming" : cached ? "resident" : "planned");
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  LoaderOptions o;
  o.features = *ParseSpec("id:int64");
  o.batch_size = 20;
  o.shuffle = false;
  o.device = 1;
  o.force_streaming = streaming;
  o.cache.enabled = cached;
  auto loader = Loader::Create(*std::move(ds), o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ(1, (*loader)->device());
  int64_t next = 0;
  for (int k = 0;; ++k) {
    auto b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    for (int64_t id : HostValues<int64_t>(*b, "id")) ASSERT_EQ(next++, id);
    if (k % 3 == 0) {
      b->Release();
    } else if (k % 3 == 1) {
      b->Release(b->cuda_stream());  // a stream of GPU 1
    } else {
      std::thread([batch = *std::move(b)]() mutable { batch.Release(); }).join();
    }
  }
  EXPECT_EQ(200, next);
}

TEST(DeviceOne, LoaderOnGpu1LeavesGpu0AloneAndTheCallersDeviceAsItWas) {
  auto count = gpu::CudaDeviceCount();
  if (!count.ok() || *count < 2) GTEST_SKIP() << "needs two CUDA devices";
  ASSERT_EQ(0, PrimaryContextActive(0)) << "GPU 0's context exists before the test";
  const std::string dir = testing::MakeIdDataset(2, 100);
  for (bool streaming : {false, true}) ReadOnGpu1(dir, streaming, false);
  ReadOnGpu1(dir, false, /*cached=*/true);
  EXPECT_EQ(0, PrimaryContextActive(0)) << "a loader on GPU 1 created GPU 0's context";
  // A caller working on GPU 0 is on GPU 0 afterwards.
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  ReadOnGpu1(dir, false, false);
  int current = -1;
  ASSERT_EQ(cudaSuccess, cudaGetDevice(&current));
  EXPECT_EQ(0, current);
}

}  // namespace
}  // namespace shardfeed
