// The emulated runtime keeps the CUDA contract the rest of the tests rely
// on: streams run asynchronously and in order, the legacy default stream
// synchronizes with blocking streams only, events capture the work queued
// at record time, errors are per thread, and the failure knobs fail the way
// a real machine does.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu/emu/emu_control.h"
#include "gpu/emu/stream_gate.h"
#include "gpu/emu/test_kernels.h"
#include "gtest/gtest.h"

namespace shardfeed::gpu::emu {
namespace {

using Gate = StreamGate;

void MarkDone(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }

cudaStream_t NewStream(unsigned flags) {
  cudaStream_t s = nullptr;
  EXPECT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&s, flags));
  return s;
}

TEST(StreamModel, WorkIsAsynchronousAndInOrder) {
  cudaStream_t s = NewStream(cudaStreamNonBlocking);
  Gate gate;
  ASSERT_EQ(cudaSuccess, gate.Enqueue(s));
  std::atomic<bool> done{false};
  ASSERT_EQ(cudaSuccess, cudaLaunchHostFunc(s, &MarkDone, &done));
  EXPECT_EQ(cudaErrorNotReady, cudaStreamQuery(s));
  EXPECT_EQ(cudaSuccess, cudaGetLastError());  // "not ready" is not an error
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(done.load());
  gate.Open();
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(s));
  EXPECT_TRUE(done.load());
  EXPECT_EQ(cudaSuccess, cudaStreamQuery(s));
  ASSERT_EQ(cudaSuccess, cudaStreamDestroy(s));
}

TEST(StreamModel, LegacyStreamWaitsForBlockingStreamsOnly) {
  for (unsigned flags : {cudaStreamDefault, cudaStreamNonBlocking}) {
    SCOPED_TRACE(flags == cudaStreamDefault ? "blocking" : "non-blocking");
    cudaStream_t s = NewStream(flags);
    Gate gate;
    ASSERT_EQ(cudaSuccess, gate.Enqueue(s));
    std::atomic<bool> legacy_ran{false};
    ASSERT_EQ(cudaSuccess, cudaLaunchHostFunc(nullptr, &MarkDone, &legacy_ran));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // Work on stream 0 waits for a blocking stream's earlier work.
    EXPECT_EQ(flags == cudaStreamNonBlocking, legacy_ran.load());
    gate.Open();
    ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(nullptr));
    EXPECT_TRUE(legacy_ran.load());
    ASSERT_EQ(cudaSuccess, cudaStreamDestroy(s));
  }
}

TEST(StreamModel, BlockingStreamWaitsForEarlierLegacyWork) {
  cudaStream_t s = NewStream(cudaStreamDefault);
  Gate gate;
  ASSERT_EQ(cudaSuccess, gate.Enqueue(nullptr));
  std::atomic<bool> ran{false};
  ASSERT_EQ(cudaSuccess, cudaLaunchHostFunc(s, &MarkDone, &ran));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(ran.load());
  gate.Open();
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(s));
  EXPECT_TRUE(ran.load());
  ASSERT_EQ(cudaSuccess, cudaStreamDestroy(s));
}

TEST(StreamModel, EventsCaptureTheWorkQueuedAtRecordTime) {
  cudaStream_t a = NewStream(cudaStreamNonBlocking), b = NewStream(cudaStreamNonBlocking);
  cudaEvent_t e, never;
  ASSERT_EQ(cudaSuccess, cudaEventCreate(&e));
  ASSERT_EQ(cudaSuccess, cudaEventCreateWithFlags(&never, cudaEventDisableTiming));
  EXPECT_EQ(cudaSuccess, cudaEventQuery(never));  // never recorded: complete
  Gate first, second;
  ASSERT_EQ(cudaSuccess, first.Enqueue(a));
  ASSERT_EQ(cudaSuccess, cudaEventRecord(e, a));
  ASSERT_EQ(cudaSuccess, second.Enqueue(a));  // after the record: not part of the event
  EXPECT_EQ(cudaErrorNotReady, cudaEventQuery(e));
  std::atomic<bool> b_ran{false};
  ASSERT_EQ(cudaSuccess, cudaStreamWaitEvent(b, e, 0));
  ASSERT_EQ(cudaSuccess, cudaLaunchHostFunc(b, &MarkDone, &b_ran));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(b_ran.load());
  first.Open();
  ASSERT_EQ(cudaSuccess, cudaEventSynchronize(e));
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(b));
  EXPECT_TRUE(b_ran.load());
  EXPECT_EQ(cudaErrorNotReady, cudaStreamQuery(a));  // `second` still holds a
  second.Open();
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(a));
  EXPECT_EQ(cudaSuccess, cudaEventDestroy(e));
  EXPECT_EQ(cudaSuccess, cudaEventDestroy(never));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(a));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(b));
}

TEST(StreamModel, ElapsedTimeBetweenTimingEvents) {
  cudaStream_t s = NewStream(cudaStreamNonBlocking);
  cudaEvent_t start, end, untimed;
  ASSERT_EQ(cudaSuccess, cudaEventCreate(&start));
  ASSERT_EQ(cudaSuccess, cudaEventCreate(&end));
  ASSERT_EQ(cudaSuccess, cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  Gate gate;
  ASSERT_EQ(cudaSuccess, cudaEventRecord(start, s));
  ASSERT_EQ(cudaSuccess, gate.Enqueue(s));
  ASSERT_EQ(cudaSuccess, cudaEventRecord(end, s));
  ASSERT_EQ(cudaSuccess, cudaEventRecord(untimed, s));
  float ms = 0;
  EXPECT_EQ(cudaErrorNotReady, cudaEventElapsedTime(&ms, start, end));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gate.Open();
  ASSERT_EQ(cudaSuccess, cudaEventSynchronize(end));
  ASSERT_EQ(cudaSuccess, cudaEventElapsedTime(&ms, start, end));
  EXPECT_GE(ms, 15.0f);
  EXPECT_EQ(cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, start, untimed));
  for (cudaEvent_t e : {start, end, untimed}) EXPECT_EQ(cudaSuccess, cudaEventDestroy(e));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(s));
}

TEST(StreamModel, LastErrorIsPerThreadAndClearedByGetLastError) {
  EXPECT_EQ(cudaErrorInvalidDevice, cudaSetDevice(99));
  std::thread other([] { EXPECT_EQ(cudaSuccess, cudaGetLastError()); });
  other.join();
  EXPECT_EQ(cudaErrorInvalidDevice, cudaPeekAtLastError());
  EXPECT_EQ(cudaErrorInvalidDevice, cudaGetLastError());
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  EXPECT_STREQ("cudaErrorInvalidDevice", cudaGetErrorName(cudaErrorInvalidDevice));
  EXPECT_STREQ("invalid device ordinal", cudaGetErrorString(cudaErrorInvalidDevice));
}

TEST(StreamModel, KernelsRunTheirGridAndCheckTheLaunchShape) {
  const int64_t n = 10000;
  int32_t *src = nullptr, *dst = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMalloc(reinterpret_cast<void**>(&src), n * 4));
  ASSERT_EQ(cudaSuccess, cudaMalloc(reinterpret_cast<void**>(&dst), n * 4));
  std::vector<int32_t> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<int32_t>(i * 3);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(src, host.data(), n * 4, cudaMemcpyHostToDevice));
  // A 2D grid with a grid-stride loop covers everything.
  ASSERT_EQ(cudaSuccess, emu_test::LaunchAddInts(src, dst, n, 5, dim3(3, 2), dim3(32, 4), nullptr));
  std::vector<int32_t> out(n);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(out.data(), dst, n * 4, cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(host[i] + 5, out[i]) << i;
  // Shapes a GPU refuses.
  EXPECT_EQ(cudaErrorInvalidConfiguration,
            emu_test::LaunchAddInts(src, dst, n, 1, dim3(1, 70000), dim3(32), nullptr));
  EXPECT_EQ(cudaErrorInvalidConfiguration,
            emu_test::LaunchAddInts(src, dst, n, 1, dim3(1), dim3(2048), nullptr));
  EXPECT_EQ(cudaErrorInvalidConfiguration,
            emu_test::LaunchAddInts(src, dst, n, 1, dim3(0), dim3(32), nullptr));
  EXPECT_EQ(cudaSuccess, cudaFree(src));
  EXPECT_EQ(cudaSuccess, cudaFree(dst));
}

TEST(StreamModel, CopiesCheckDirectionAndBounds) {
  void* dev = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&dev, 100));
  std::vector<char> host(200);
  EXPECT_EQ(cudaErrorInvalidValue, cudaMemcpy(dev, host.data(), 200, cudaMemcpyHostToDevice));
  EXPECT_EQ(cudaErrorInvalidValue, cudaMemcpy(host.data(), dev, 200, cudaMemcpyDeviceToHost));
  EXPECT_EQ(cudaErrorInvalidValue, cudaMemcpy(host.data(), dev, 10, cudaMemcpyHostToDevice));
  EXPECT_EQ(cudaErrorInvalidValue, cudaMemset(host.data(), 0, 10));
  EXPECT_EQ(cudaErrorInvalidValue, cudaFree(host.data()));
  (void)cudaGetLastError();
  // Fresh device memory is not zero (cudaMalloc does not clear it).
  ASSERT_EQ(cudaSuccess, cudaMemcpy(host.data(), dev, 100, cudaMemcpyDeviceToHost));
  EXPECT_EQ(static_cast<char>(0xA5), host[0]);
  EXPECT_EQ(cudaSuccess, cudaFree(dev));
}

// A fresh thread has no context: cudaGetDevice says 0 without creating
// one; the first call that needs a device binds device 0 (what the device
// guard must avoid on every rank).
TEST(ContextModel, ImplicitContextOnFirstUse) {
  std::thread t([] {
    CUcontext (*get)(CUcontext*) = nullptr;
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    ASSERT_EQ(cudaSuccess,
              cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q));
    ASSERT_EQ(cudaDriverEntryPointSuccess, q);
    auto get_current = reinterpret_cast<CUresult (*)(CUcontext*)>(fn);
    (void)get;
    CUcontext c = reinterpret_cast<CUcontext>(1);
    ASSERT_EQ(CUDA_SUCCESS, get_current(&c));
    EXPECT_EQ(nullptr, c);
    const uint64_t binds = PrimaryContextBinds(0);
    int device = -1;
    ASSERT_EQ(cudaSuccess, cudaGetDevice(&device));
    EXPECT_EQ(0, device);
    EXPECT_EQ(binds, PrimaryContextBinds(0));
    void* p = nullptr;
    ASSERT_EQ(cudaSuccess, cudaMalloc(&p, 16));
    EXPECT_EQ(binds + 1, PrimaryContextBinds(0));
    ASSERT_EQ(CUDA_SUCCESS, get_current(&c));
    EXPECT_NE(nullptr, c);
    EXPECT_EQ(cudaSuccess, cudaFree(p));
  });
  t.join();
}

TEST(ContextModel, EventAndStreamMustShareADevice) {
  ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
  cudaStream_t s1 = NewStream(cudaStreamNonBlocking);
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  cudaEvent_t e0;
  ASSERT_EQ(cudaSuccess, cudaEventCreate(&e0));
  EXPECT_EQ(cudaErrorInvalidResourceHandle, cudaEventRecord(e0, s1));
  (void)cudaGetLastError();
  EXPECT_EQ(cudaSuccess, cudaEventDestroy(e0));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(s1));
}

// The failure knobs (here through Configure; the SHARDFEED_CUDA_EMU_*
// variables do the same for a whole test binary).
class Knobs : public testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(Configure(Config())); }
};

TEST_F(Knobs, NoDevice) {
  Config c;
  c.devices = 0;
  ASSERT_TRUE(Configure(c));
  int n = -1;
  EXPECT_EQ(cudaErrorNoDevice, cudaGetDeviceCount(&n));
  EXPECT_EQ(0, n);
  void* p = nullptr;
  EXPECT_EQ(cudaErrorNoDevice, cudaMalloc(&p, 1));
}

TEST_F(Knobs, InsufficientDriverAndOtherInitErrors) {
  Config c;
  c.driver_version = 12040;
  ASSERT_TRUE(Configure(c));
  int n = -1, version = 0;
  EXPECT_EQ(cudaErrorInsufficientDriver, cudaGetDeviceCount(&n));
  EXPECT_EQ(cudaSuccess, cudaDriverGetVersion(&version));
  EXPECT_EQ(12040, version);
  c = Config();
  c.init_error = cudaErrorDevicesUnavailable;
  ASSERT_TRUE(Configure(c));
  EXPECT_EQ(cudaErrorDevicesUnavailable, cudaGetDeviceCount(&n));
  EXPECT_EQ(cudaErrorDevicesUnavailable, cudaSetDevice(0));
}

TEST_F(Knobs, DeviceMemoryRunsOut) {
  Config c;
  c.memory_bytes = 1 << 20;
  ASSERT_TRUE(Configure(c));
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaSuccess, cudaMemGetInfo(&free_bytes, &total));
  EXPECT_EQ(size_t{1} << 20, total);
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&a, 700 << 10));
  EXPECT_FALSE(Configure(c));  // not while memory is allocated
  EXPECT_EQ(cudaErrorMemoryAllocation, cudaMalloc(&b, 700 << 10));
  EXPECT_EQ(cudaErrorMemoryAllocation, cudaGetLastError());
  ASSERT_EQ(cudaSuccess, cudaMemGetInfo(&free_bytes, &total));
  EXPECT_EQ((1u << 20) - (700u << 10), free_bytes);
  EXPECT_EQ(cudaSuccess, cudaFree(a));
  EXPECT_EQ(cudaSuccess, cudaMalloc(&b, 700 << 10));
  EXPECT_EQ(cudaSuccess, cudaFree(b));
}

}  // namespace
}  // namespace shardfeed::gpu::emu
