// The emulator catches each class of GPU bug it exists for:
//  - host code dereferencing a device pointer dies, as on a GPU;
//  - a ring slot refilled before its consumer's stream passed the fence
//    (here: ConsumerFence with its stream wait dropped) is reported;
//  - a host write into pinned memory that a queued copy has not read is
//    reported;
//  - a kernel reading a copy's destination without waiting for the copy
//    sees stale data under chaos (and the race check names the pair).
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <vector>

#include "gpu/emu/emu_control.h"
#include "gpu/emu/stream_gate.h"
#include "gpu/emu/test_kernels.h"
#include "gpu/fill_kernel.h"
#include "gtest/gtest.h"
#include "reader/consumer_fence.h"
#include "reader/device_context.h"

namespace shardfeed::gpu::emu {
namespace {

using Gate = StreamGate;

class BugDetection : public testing::Test {
 protected:
  void SetUp() override { testing::FLAGS_gtest_death_test_style = "threadsafe"; }
  void TearDown() override { ASSERT_TRUE(Configure(Config())); }
};

TEST_F(BugDetection, HostReadOfADevicePointerDies) {
  void* dev = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&dev, 4096));
  EXPECT_DEATH(
      {
        volatile const char* p = static_cast<const char*>(dev) + 100;
        (void)*p;
      },
      "cuda_emu: host code touched emulated device memory at 0x[0-9a-f]+ \\(allocation of 4096 "
      "bytes");
  EXPECT_DEATH(std::memset(dev, 0, 16), "host code touched emulated device memory");
  EXPECT_EQ(cudaSuccess, cudaFree(dev));
}

TEST_F(BugDetection, KernelRunningPastItsAllocationDies) {
  void* dev = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&dev, 4096));
  EXPECT_DEATH(
      {
        (void)LaunchFillBytes(static_cast<unsigned char*>(dev), 3 * 4096, 1, nullptr);
        (void)cudaDeviceSynchronize();
      },
      "went out of bounds of device memory");
  EXPECT_EQ(cudaSuccess, cudaFree(dev));
}

// GpuOps that forget the copy stream's wait: the fence bug.
class ForgetfulOps : public GpuOps {
 public:
  explicit ForgetfulOps(GpuOps* real) : real_(real) {}
  absl::StatusOr<int> StreamDevice(void* s) override { return real_->StreamDevice(s); }
  absl::StatusOr<void*> CreateEvent(int d) override { return real_->CreateEvent(d); }
  void DestroyEvent(void* e, int d) override { real_->DestroyEvent(e, d); }
  absl::Status RecordEvent(void* e, int d, void* s) override { return real_->RecordEvent(e, d, s); }
  absl::Status StreamWaitEvent(void*, void*) override { return absl::OkStatus(); }
  absl::Status SynchronizeDevice() override { return absl::OkStatus(); }

 private:
  GpuOps* real_;
};

// One slot's life: filled on the copy stream, read by the consumer's
// stream (held back by a gate, so the read is still queued), released
// with that stream, refilled. Returns the consumer's copy of the first fill.
std::vector<char> FillReadRefill(GpuOps* ops, cudaStream_t copy) {
  const size_t n = 1 << 16;
  void* slot = nullptr;
  char *pinned = nullptr, *seen = nullptr;  // pinned: a copy into pageable memory is synchronous
  EXPECT_EQ(cudaSuccess, cudaMalloc(&slot, n));
  EXPECT_EQ(cudaSuccess, cudaHostAlloc(reinterpret_cast<void**>(&pinned), n, 0));
  EXPECT_EQ(cudaSuccess, cudaHostAlloc(reinterpret_cast<void**>(&seen), n, 0));
  cudaStream_t consumer = nullptr;
  EXPECT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  cudaEvent_t ready;
  EXPECT_EQ(cudaSuccess, cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  {
    ConsumerFence fence(ops);
    std::memset(pinned, 1, n);
    EXPECT_EQ(cudaSuccess, cudaMemcpyAsync(slot, pinned, n, cudaMemcpyHostToDevice, copy));
    EXPECT_EQ(cudaSuccess, cudaEventRecord(ready, copy));
    Gate gate;
    EXPECT_EQ(cudaSuccess, cudaStreamWaitEvent(consumer, ready, 0));
    EXPECT_EQ(cudaSuccess, gate.Enqueue(consumer));
    EXPECT_EQ(cudaSuccess,
              cudaMemcpyAsync(seen, slot, n, cudaMemcpyDeviceToHost, consumer));
    fence.OnRelease(ConsumerStreams::Of({consumer}));
    EXPECT_EQ(cudaSuccess, cudaEventSynchronize(ready));  // the pinned rows may be rewritten
    std::memset(pinned, 2, n);
    EXPECT_TRUE(fence.BeforeReuse(copy).ok());
    EXPECT_EQ(cudaSuccess, cudaMemcpyAsync(slot, pinned, n, cudaMemcpyHostToDevice, copy));
    gate.Open();
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(consumer));
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(copy));
  }
  EXPECT_EQ(cudaSuccess, cudaEventDestroy(ready));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(consumer));
  EXPECT_EQ(cudaSuccess, cudaFree(slot));
  std::vector<char> out(seen, seen + n);
  EXPECT_EQ(cudaSuccess, cudaFreeHost(pinned));
  EXPECT_EQ(cudaSuccess, cudaFreeHost(seen));
  return out;
}

TEST_F(BugDetection, SlotRefilledBeforeTheConsumersFenceIsReported) {
  std::string note;
  auto ctx = OpenDeviceContext(0, &note);
  ASSERT_TRUE(ctx.ok() && *ctx != nullptr) << ctx.status() << note;
  cudaStream_t copy = (*ctx)->stream.get();
  // The fence as written: the refill waits for the consumer's read.
  std::vector<char> seen = FillReadRefill((*ctx)->ops.get(), copy);
  EXPECT_EQ(std::vector<char>(seen.size(), 1), seen);
  // Without the wait the refill races the consumer's read.
  ForgetfulOps forgetful((*ctx)->ops.get());
  EXPECT_DEATH(FillReadRefill(&forgetful, copy),
               "race: cudaMemcpyAsync of 65536 bytes on the non-blocking stream .* writes device "
               "memory 0x[0-9a-f]+ \\(65536 bytes\\) that cudaMemcpyAsync of 65536 bytes on the "
               "non-blocking stream .* reads");
}

TEST_F(BugDetection, HostOverwritingPinnedMemoryBeforeTheCopyReadItDies) {
  EXPECT_DEATH(
      {
        void* dev = nullptr;
        char* pinned = nullptr;
        (void)cudaMalloc(&dev, 4096);
        (void)cudaHostAlloc(reinterpret_cast<void**>(&pinned), 4096, 0);
        cudaStream_t s = nullptr;
        (void)cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        Gate gate;
        (void)gate.Enqueue(s);
        (void)cudaMemcpyAsync(dev, pinned, 4096, cudaMemcpyHostToDevice, s);
        pinned[7] = 42;  // the copy has not read it yet
        gate.Open();
        (void)cudaStreamSynchronize(s);
      },
      "cuda_emu: race: the host wrote pinned memory 0x[0-9a-f]+ \\(4096 bytes\\) after "
      "cudaMemcpyAsync of 4096 bytes was queued and before the copy read it");
}

// Copies 7s into device memory on one stream and, on another, adds 0 to it
// without waiting (or waiting, when `wait`). Returns how many of `trials`
// saw something other than 7.
int StaleReads(bool wait, int trials) {
  const int64_t n = 256;
  int32_t *dst = nullptr, *out = nullptr, *pinned = nullptr;
  EXPECT_EQ(cudaSuccess, cudaMalloc(reinterpret_cast<void**>(&dst), n * 4));
  EXPECT_EQ(cudaSuccess, cudaMalloc(reinterpret_cast<void**>(&out), n * 4));
  EXPECT_EQ(cudaSuccess, cudaHostAlloc(reinterpret_cast<void**>(&pinned), n * 4, 0));
  cudaStream_t copy, compute;
  EXPECT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  EXPECT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  cudaEvent_t copied;
  EXPECT_EQ(cudaSuccess, cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  int stale = 0;
  for (int t = 0; t < trials; ++t) {
    EXPECT_EQ(cudaSuccess, cudaMemset(dst, 0, n * 4));
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    for (int64_t i = 0; i < n; ++i) pinned[i] = 7;
    EXPECT_EQ(cudaSuccess, cudaMemcpyAsync(dst, pinned, n * 4, cudaMemcpyHostToDevice, copy));
    EXPECT_EQ(cudaSuccess, cudaEventRecord(copied, copy));
    if (wait) {
      EXPECT_EQ(cudaSuccess, cudaStreamWaitEvent(compute, copied, 0));
    }
    EXPECT_EQ(cudaSuccess, emu_test::LaunchAddInts(dst, out, n, 0, dim3(2), dim3(128), compute));
    std::vector<int32_t> got(n);
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(compute));
    EXPECT_EQ(cudaSuccess, cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    stale += got != std::vector<int32_t>(n, 7);
  }
  EXPECT_EQ(cudaSuccess, cudaEventDestroy(copied));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(copy));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(compute));
  EXPECT_EQ(cudaSuccess, cudaFree(dst));
  EXPECT_EQ(cudaSuccess, cudaFree(out));
  EXPECT_EQ(cudaSuccess, cudaFreeHost(pinned));
  return stale;
}

TEST_F(BugDetection, KernelNotWaitingForACopySeesStaleDataUnderChaos) {
  Config c;
  c.chaos_seed = 21;
  c.chaos_max_delay_us = 3000;
  c.races = RaceMode::kCount;
  ASSERT_TRUE(Configure(c));
  const uint64_t races = RaceCount();
  const int stale = StaleReads(/*wait=*/false, 40);
  EXPECT_GT(stale, 0) << "no stale read in 40 unordered trials under chaos";
  EXPECT_GE(RaceCount() - races, 40u);  // and each trial's race was named
  const uint64_t before = RaceCount();
  EXPECT_EQ(0, StaleReads(/*wait=*/true, 40));
  EXPECT_EQ(before, RaceCount());
}

}  // namespace
}  // namespace shardfeed::gpu::emu
