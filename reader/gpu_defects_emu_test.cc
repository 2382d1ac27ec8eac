// Regression tests for the GPU-path defects of issue 21 (section 3) that
// need the emulated CUDA runtime's knobs (gpu/emu/emu_control.h: device
// memory size, no device, an old driver, an init error, contexts, the race
// check). Linked only against //gpu/emu:cudart; each test names its defect
// and says what the old code did. Graph capture (defects 3 and 10):
// graph_capture_emu_test.cc.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <thread>
#include <vector>

#include "gpu/device_guard.h"
#include "gpu/emu/emu_control.h"
#include "gtest/gtest.h"
#include "reader/consumer_fence.h"
#include "reader/device_context.h"
#include "reader/emu_loader_test_util.h"
#include "reader/loader.h"

namespace shardfeed {
namespace {

namespace emu = gpu::emu;

using testing::CachedIdOptions;
using testing::ChaosConfig;
using testing::EmuConfig;
using testing::ExpectEveryIdOnce;
using testing::HostIds;
using testing::IdOptions;
using testing::kIdRecords;
using testing::kIdTableBytes;

using testing::OpenIdLoader;

// ---- Defect 1: only "no CUDA device" falls back to host memory ----------

TEST(GpuDefects, OnlyNoDeviceFallsBackDriverFaultsAreErrorsNamingTheVersion) {
  {
    emu::Config c;
    c.devices = 0;
    EmuConfig config(c);
    ASSERT_TRUE(config.ok());
    auto loader = OpenIdLoader(IdOptions(0));
    ASSERT_TRUE(loader.ok()) << loader.status();
    EXPECT_EQ(-1, (*loader)->device());
    EXPECT_NE(std::string::npos, (*loader)->device_note().find("no CUDA device"))
        << (*loader)->device_note();
  }
  {
    emu::Config c;
    c.driver_version = 12040;  // older than the CUDA 13 runtime needs
    EmuConfig config(c);
    ASSERT_TRUE(config.ok());
    auto loader = OpenIdLoader(IdOptions(0));
    ASSERT_FALSE(loader.ok()) << "old code: host tensors, " << (*loader)->device_note();
    EXPECT_EQ(absl::StatusCode::kFailedPrecondition, loader.status().code()) << loader.status();
    EXPECT_NE(std::string::npos,
              loader.status().message().find("the NVIDIA driver supports CUDA 12.4"))
        << loader.status();
  }
  for (cudaError_t e : {cudaErrorInitializationError, cudaErrorDevicesUnavailable}) {
    emu::Config c;
    c.init_error = e;
    EmuConfig config(c);
    ASSERT_TRUE(config.ok());
    auto loader = OpenIdLoader(IdOptions(0));
    ASSERT_FALSE(loader.ok()) << cudaGetErrorName(e) << ": old code: host tensors";
    EXPECT_EQ(absl::StatusCode::kFailedPrecondition, loader.status().code()) << loader.status();
    EXPECT_NE(std::string::npos, loader.status().message().find(cudaGetErrorName(e)))
        << loader.status();
    EXPECT_NE(std::string::npos, loader.status().message().find("supports CUDA 13.0"))
        << loader.status();
  }
}

// ---- Defect 5: the resident cache's budget and out-of-memory fallback ----

TEST(GpuDefects, OutOfDeviceMemoryForTheTableStreamsInstead) {
  emu::Config c;
  c.memory_bytes = kIdTableBytes / 2;  // the table cannot be allocated; the ring can
  EmuConfig config(c);
  ASSERT_TRUE(config.ok());
  LoaderOptions o = CachedIdOptions(0);
  o.cache.budget_bytes = int64_t{1} << 30;  // the budget lets it try
  auto loader = OpenIdLoader(o);
  ASSERT_TRUE(loader.ok()) << "old code: Loader::Create failed: " << loader.status();
  EXPECT_EQ(0, (*loader)->device());
  EXPECT_EQ("planned", (*loader)->path_note());
  EXPECT_NE(std::string::npos, (*loader)->cache_note().find("out of memory in GPU 0"))
      << (*loader)->cache_note();
  ExpectEveryIdOnce(loader->get());
}

TEST(GpuDefects, DefaultBudgetLeavesTheTrainingJobMostOfTheDevice) {
  emu::Config c;
  c.memory_bytes = kIdTableBytes * 2;  // the table is half of the device
  EmuConfig config(c);
  ASSERT_TRUE(config.ok());
  auto loader = OpenIdLoader(CachedIdOptions(0));
  ASSERT_TRUE(loader.ok()) << loader.status();
  // Old code: 80% of free memory, so the table took half the GPU.
  EXPECT_EQ("planned", (*loader)->path_note()) << (*loader)->cache_note();
  EXPECT_NE(std::string::npos, (*loader)->cache_note().find("more than the budget"))
      << (*loader)->cache_note();
}

TEST(GpuDefects, TheBudgetCountsTheRing) {
  LoaderOptions o = CachedIdOptions(0);
  o.cache.budget_bytes = kIdTableBytes;  // the table fits exactly; its ring does not
  auto loader = OpenIdLoader(o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  EXPECT_EQ("planned", (*loader)->path_note()) << "old code: resident, the ring over budget";
  EXPECT_NE(std::string::npos, (*loader)->cache_note().find("of ring slots"))
      << (*loader)->cache_note();
  o.cache.budget_bytes = kIdTableBytes * 2;
  loader = OpenIdLoader(o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  EXPECT_EQ("resident", (*loader)->path_note()) << (*loader)->cache_note();
  ExpectEveryIdOnce(loader->get());
}

// ---- Defect 6: the table's load is ordered before the first gather ------

// Old code: cudaMemcpy from pageable memory on the legacy stream returned
// once the source was staged; the gathers on the loader's non-blocking
// stream were unordered with the table's writes (the emulator's race check
// aborts; with chaos delays the gather read a table not yet written).
TEST(GpuDefects, ResidentTableLoadIsOrderedBeforeTheGathers) {
  EmuConfig config(ChaosConfig(21));
  ASSERT_TRUE(config.ok());
  auto loader = OpenIdLoader(CachedIdOptions(0));
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ("resident", (*loader)->path_note()) << (*loader)->cache_note();
  ExpectEveryIdOnce(loader->get());
  EXPECT_EQ(0u, emu::RaceCount());
}

// ---- Defect 4: an earlier ignored error is not the launch's -------------

// Old code: the gather's launcher returned cudaGetLastError(), which was the
// caller's earlier failure on the same thread, and the loader died.
TEST(GpuDefects, AnEarlierIgnoredErrorDoesNotFailTheNextLaunch) {
  auto loader = OpenIdLoader(CachedIdOptions(0));
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ("resident", (*loader)->path_note()) << (*loader)->cache_note();
  for (int k = 0; k < 3; ++k) {
    // The training thread's own failed call, which it chose to ignore.
    ASSERT_EQ(cudaErrorInvalidDevice, cudaSetDevice(99));
    absl::StatusOr<Batch> b = (*loader)->Next();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(64u, HostIds(*b).size());
  }
  (void)cudaGetLastError();
}

// ---- Defect 8: the fence event lives on the consumer stream's device ----

TEST(GpuDefects, FenceEventOnTheConsumerStreamsDevice) {
  std::string note;
  auto ctx = OpenDeviceContext(0, &note);
  ASSERT_TRUE(ctx.ok() && *ctx != nullptr) << note;
  cudaStream_t other = nullptr;
  {
    gpu::ScopedDevice on(1);
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  }
  {
    ConsumerFence fence((*ctx)->ops.get());
    fence.OnRelease(ConsumerStreams::Of({other}));
    // Old code: the event was device 0's, cudaEventRecord on device 1's
    // stream failed, and the fence fell back to syncing device 0 (not 1).
    EXPECT_FALSE(fence.must_sync_device());
    EXPECT_EQ(1u, fence.pending_events());
    EXPECT_TRUE(fence.BeforeReuse((*ctx)->stream_handle()).ok());
  }
  {
    gpu::ScopedDevice on(1);
    ASSERT_EQ(cudaSuccess, cudaStreamDestroy(other));
  }
}

// A consumer fenced through FenceAfter when it is done may destroy its
// stream before the batch is released: the release records nothing on it
// (the emulator aborts on a destroyed stream). Python's capsule deleter
// does this; before, the fence was recorded when the whole batch died.
TEST(GpuDefects, FenceAfterThenTheConsumersStreamMayGo) {
  auto loader = OpenIdLoader(IdOptions(0));
  ASSERT_TRUE(loader.ok()) << loader.status();
  absl::StatusOr<Batch> b = (*loader)->Next();
  ASSERT_TRUE(b.ok()) << b.status();
  cudaStream_t consumer = nullptr;
  gpu::ScopedDevice on(0);
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  ASSERT_EQ(cudaSuccess,
            cudaStreamWaitEvent(consumer, static_cast<cudaEvent_t>(b->cuda_event()), 0));
  b->FenceAfter(consumer);
  ASSERT_EQ(cudaSuccess, cudaStreamDestroy(consumer));
  b->ReleaseAfter({});
  for (int k = 0; k < 5; ++k) ASSERT_TRUE((*loader)->Next().ok());  // the slot is refilled
}

// ---- Defect 10: teardown under the device guard --------------------------

// A thread with no context (a Python thread dropping the last batch) tears
// the loader down without binding device 0. This held for the old code too
// (a guard leaves such a thread on the loader's device, so the old bare
// frees after it ran there); graph_capture_emu_test's teardown during a
// capture is defect 10's regression test.
TEST(GpuDefects, TeardownOnAFreshThreadNeverTouchesDeviceZero) {
  auto loader = OpenIdLoader(CachedIdOptions(1));
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ("resident", (*loader)->path_note()) << (*loader)->cache_note();
  absl::StatusOr<Batch> b = (*loader)->Next();
  ASSERT_TRUE(b.ok()) << b.status();
  const uint64_t binds = emu::PrimaryContextBinds(0);
  std::thread([&] {
    b->Release();
    loader->reset();
  }).join();
  EXPECT_EQ(binds, emu::PrimaryContextBinds(0));
}

}  // namespace
}  // namespace shardfeed
