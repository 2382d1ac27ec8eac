// Regression tests for the GPU-path defects of issue 21 (section 3) that
// need the emulated CUDA runtime's knobs (gpu/emu/emu_control.h: device
// memory size, no device, an old driver, an init error, contexts, the race
// check, graph capture). Linked only against //gpu/emu:cudart; each test
// names its defect and says what the old code did.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "gpu/device_guard.h"
#include "gpu/emu/emu_control.h"
#include "gtest/gtest.h"
#include "reader/consumer_fence.h"
#include "reader/device_context.h"
#include "reader/id_dataset_test_util.h"
#include "reader/loader.h"

namespace shardfeed {
namespace {

namespace emu = gpu::emu;

constexpr int kShards = 4, kPerShard = 1024;  // 4096 records: an 8-byte "id" each
constexpr int64_t kTableBytes = int64_t{kShards} * kPerShard * 8;

LoaderOptions IdOptions(int device) {
  LoaderOptions o;
  o.features = *ParseSpec("id:int64");
  o.batch_size = 64;
  o.epochs = 1;
  o.seed = 5;
  o.device = device;
  return o;
}

// The ids of batch b, copied back from the device (after its copy event).
std::vector<int64_t> HostIds(const Batch& b) {
  const Tensor* t = b.Find("id");
  EXPECT_NE(nullptr, t);
  std::vector<int64_t> ids(t == nullptr ? 0 : t->bytes / 8);
  if (ids.empty()) return ids;
  EXPECT_EQ(0, t->device);
  gpu::ScopedDevice on(t->device);
  EXPECT_EQ(cudaSuccess, cudaEventSynchronize(static_cast<cudaEvent_t>(b.cuda_event())));
  EXPECT_EQ(cudaSuccess, cudaMemcpy(ids.data(), t->data, t->bytes, cudaMemcpyDeviceToHost));
  return ids;
}

const std::string& IdDataset() {
  static const std::string* dir = new std::string(testing::MakeIdDataset(kShards, kPerShard));
  return *dir;
}

// Every id of the epoch exactly once, read back from wherever it lives.
void ExpectEveryIdOnce(Loader* loader) {
  std::set<int64_t> seen;
  int64_t rows = 0;
  for (;;) {
    absl::StatusOr<Batch> b = loader->Next();
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    for (int64_t id : HostIds(*b)) {
      ASSERT_TRUE(seen.insert(id).second) << "id " << id << " twice";
      ++rows;
    }
  }
  EXPECT_EQ(int64_t{kShards} * kPerShard, rows);
  EXPECT_EQ(0, *seen.begin());
  EXPECT_EQ(kShards * kPerShard - 1, *seen.rbegin());
}

// Reconfigures the emulated machine for one test and restores the default
// (two 4 GiB GPUs, a CUDA 13 driver) after it.
class EmuConfig {
 public:
  explicit EmuConfig(const emu::Config& c) { ok_ = emu::Configure(c); }
  ~EmuConfig() { EXPECT_TRUE(emu::Configure(emu::Config())) << "something of the test still lives"; }
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

absl::StatusOr<std::unique_ptr<Loader>> Open(const LoaderOptions& o) {
  absl::StatusOr<Dataset> ds = Dataset::Open({IdDataset()});
  if (!ds.ok()) return ds.status();
  return Loader::Create(*std::move(ds), o);
}

// ---- Defect 1: only "no CUDA device" falls back to host memory ----------

TEST(GpuDefects, OnlyNoDeviceFallsBackDriverFaultsAreErrorsNamingTheVersion) {
  {
    emu::Config c;
    c.devices = 0;
    EmuConfig config(c);
    ASSERT_TRUE(config.ok());
    auto loader = Open(IdOptions(0));
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
    auto loader = Open(IdOptions(0));
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
    auto loader = Open(IdOptions(0));
    ASSERT_FALSE(loader.ok()) << cudaGetErrorName(e) << ": old code: host tensors";
    EXPECT_EQ(absl::StatusCode::kFailedPrecondition, loader.status().code()) << loader.status();
    EXPECT_NE(std::string::npos, loader.status().message().find(cudaGetErrorName(e)))
        << loader.status();
    EXPECT_NE(std::string::npos, loader.status().message().find("supports CUDA 13.0"))
        << loader.status();
  }
}

// ---- Defect 5: the resident cache's budget and out-of-memory fallback ----

LoaderOptions CachedOptions(int device) {
  LoaderOptions o = IdOptions(device);
  o.cache.enabled = true;
  return o;
}

TEST(GpuDefects, OutOfDeviceMemoryForTheTableStreamsInstead) {
  emu::Config c;
  c.memory_bytes = kTableBytes / 2;  // the table cannot be allocated; the ring can
  EmuConfig config(c);
  ASSERT_TRUE(config.ok());
  LoaderOptions o = CachedOptions(0);
  o.cache.budget_bytes = int64_t{1} << 30;  // the budget lets it try
  auto loader = Open(o);
  ASSERT_TRUE(loader.ok()) << "old code: Loader::Create failed: " << loader.status();
  EXPECT_EQ(0, (*loader)->device());
  EXPECT_EQ("planned", (*loader)->path_note());
  EXPECT_NE(std::string::npos, (*loader)->cache_note().find("out of memory in GPU 0"))
      << (*loader)->cache_note();
  ExpectEveryIdOnce(loader->get());
}

TEST(GpuDefects, DefaultBudgetLeavesTheTrainingJobMostOfTheDevice) {
  emu::Config c;
  c.memory_bytes = kTableBytes * 2;  // the table is half of the device
  EmuConfig config(c);
  ASSERT_TRUE(config.ok());
  auto loader = Open(CachedOptions(0));
  ASSERT_TRUE(loader.ok()) << loader.status();
  // Old code: 80% of free memory, so the table took half the GPU.
  EXPECT_EQ("planned", (*loader)->path_note()) << (*loader)->cache_note();
  EXPECT_NE(std::string::npos, (*loader)->cache_note().find("more than the budget"))
      << (*loader)->cache_note();
}

TEST(GpuDefects, TheBudgetCountsTheRing) {
  LoaderOptions o = CachedOptions(0);
  o.cache.budget_bytes = kTableBytes;  // the table fits exactly; its ring does not
  auto loader = Open(o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  EXPECT_EQ("planned", (*loader)->path_note()) << "old code: resident, the ring over budget";
  EXPECT_NE(std::string::npos, (*loader)->cache_note().find("of ring slots"))
      << (*loader)->cache_note();
  o.cache.budget_bytes = kTableBytes * 2;
  loader = Open(o);
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
  emu::Config c;
  c.chaos_seed = 21;
  c.chaos_max_delay_us = 200;
  EmuConfig config(c);
  ASSERT_TRUE(config.ok());
  auto loader = Open(CachedOptions(0));
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ("resident", (*loader)->path_note()) << (*loader)->cache_note();
  ExpectEveryIdOnce(loader->get());
  EXPECT_EQ(0u, emu::RaceCount());
}

// ---- Defect 4: an earlier ignored error is not the launch's -------------

// Old code: the gather's launcher returned cudaGetLastError(), which was the
// caller's earlier failure on the same thread, and the loader died.
TEST(GpuDefects, AnEarlierIgnoredErrorDoesNotFailTheNextLaunch) {
  auto loader = Open(CachedOptions(0));
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
  auto loader = Open(IdOptions(0));
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

// ---- Defect 3: a graph capture on the training thread survives ----------

// The training thread captures a CUDA graph in global mode (what
// torch.cuda.graph and torch.compile "reduce-overhead" do) while it takes
// batches, holds them (the ring grows: allocations on this very thread) and
// releases them on its stream, and the loader's threads refill slots (event
// syncs, copies). Old code: those calls were refused (cudaErrorStream-
// CaptureUnsupported: the loader failed) and invalidated the capture.
TEST(GpuDefects, GraphCaptureOnTheTrainingThreadSurvivesTheLoader) {
  LoaderOptions o = IdOptions(0);
  o.prefetch = 2;
  o.grow_ring = true;
  auto loader = Open(o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  // A plain cudaSetDevice (a ScopedDevice would relax this thread's mode).
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  cudaStream_t capturing = nullptr, consumer = nullptr;
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&capturing, cudaStreamNonBlocking));
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  ASSERT_EQ(cudaSuccess, cudaStreamBeginCapture(capturing, cudaStreamCaptureModeGlobal));
  bool ended = false;
  cudaGraph_t graph = nullptr;
  absl::Cleanup end_capture = [&] {  // a failed assertion must not leave it open
    if (!ended) (void)cudaStreamEndCapture(capturing, &graph);
    (void)cudaGetLastError();
  };
  int64_t rows = 0;
  std::vector<Batch> held;
  for (;;) {
    absl::StatusOr<Batch> b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    rows += b->size();
    held.push_back(*std::move(b));
    if (held.size() == 4) {  // four held: the ring grew past its two slots
      for (Batch& h : held) h.Release(consumer);
      held.clear();
    }
  }
  for (Batch& h : held) h.Release(consumer);
  ended = true;
  EXPECT_EQ(cudaSuccess, cudaStreamEndCapture(capturing, &graph)) << "the capture was invalidated";
  EXPECT_EQ(int64_t{kShards} * kPerShard, rows);
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(consumer));
  ASSERT_EQ(cudaSuccess, cudaStreamDestroy(capturing));
  ASSERT_EQ(cudaSuccess, cudaStreamDestroy(consumer));
}

// ---- Defect 10: teardown under the device guard --------------------------

// Old code: the resident table (cudaFree) and the context's stream were
// freed after the guard's scope, bare: on a thread with no context that
// created device 0's context in a process that only uses device 1.
TEST(GpuDefects, TeardownOnAFreshThreadNeverTouchesDeviceZero) {
  auto loader = Open(CachedOptions(1));
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
