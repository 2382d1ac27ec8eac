// The device context's CUDA ops (reader/device_context.cc) behind a
// ConsumerFence, on the emulated CUDA runtime (two GPUs): which device a
// consumer's fence event lives on. Linked only against //gpu/emu:cudart.
// Regressions from the review of issue 21's defect 8 fix.
#include <cuda_runtime_api.h>

#include <string>
#include <thread>

#include "gpu/emu/emu_control.h"
#include "gtest/gtest.h"
#include "reader/consumer_fence.h"
#include "reader/device_context.h"

namespace shardfeed {
namespace {

namespace emu = gpu::emu;

std::shared_ptr<DeviceContext> Open(int device) {
  std::string note;
  auto ctx = OpenDeviceContext(device, &note);
  EXPECT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_TRUE(ctx.ok() && *ctx != nullptr) << note;
  return ctx.ok() ? *ctx : nullptr;
}

cudaStream_t StreamOn(int device) {
  cudaStream_t s = nullptr;
  EXPECT_EQ(cudaSuccess, cudaSetDevice(device));
  EXPECT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

// Of a pool [e1 on GPU 0, e2 on GPU 0], a release on a GPU-1 stream replaced
// only e1 (`if`, not `while`): e2 failed to record on the GPU-1 stream and the
// fallback synchronized GPU 0, not GPU 1.
TEST(DeviceContextEmu, EveryPooledEventOfAnotherDeviceIsReplaced) {
  std::shared_ptr<DeviceContext> ctx = Open(0);
  ASSERT_NE(nullptr, ctx);
  std::thread t([&] {
    cudaStream_t a = StreamOn(0), b = StreamOn(0), c = StreamOn(1);
    {
      ConsumerFence fence(ctx->ops.get());
      fence.OnRelease(ConsumerStreams::Of({a, b}));
      EXPECT_FALSE(fence.must_sync_device());
      EXPECT_EQ(2u, fence.pending_events());
      ASSERT_TRUE(fence.BeforeReuse(ctx->stream_handle()).ok());
      fence.OnRelease(ConsumerStreams::Of({c}));  // GPU 1's stream
      EXPECT_FALSE(fence.must_sync_device()) << "an event of GPU 0 was recorded on GPU 1's stream";
      EXPECT_EQ(1u, fence.pending_events());
      ASSERT_TRUE(fence.BeforeReuse(ctx->stream_handle()).ok());
    }
    for (cudaStream_t s : {a, b, c}) EXPECT_EQ(cudaSuccess, cudaStreamDestroy(s));
  });
  t.join();
}

// Stream 0, cudaStreamLegacy and cudaStreamPerThread are streams of the
// batch's device (DLPack: the stream is on the tensor's device). They were
// resolved to the releasing thread's current device: a loader on GPU 1
// whose tensor died while GPU 0 was current fenced GPU 0's legacy stream.
TEST(DeviceContextEmu, PseudoStreamsAreTheLoadersDevice) {
  std::shared_ptr<DeviceContext> ctx = Open(1);
  ASSERT_NE(nullptr, ctx);
  std::thread t([&] {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
    for (void* s : {static_cast<void*>(nullptr), static_cast<void*>(cudaStreamLegacy),
                    static_cast<void*>(cudaStreamPerThread)}) {
      auto device = ctx->ops->StreamDevice(s);
      ASSERT_TRUE(device.ok()) << device.status();
      EXPECT_EQ(1, *device) << "stream " << s;
    }
    int current = -1;
    ASSERT_EQ(cudaSuccess, cudaGetDevice(&current));
    EXPECT_EQ(0, current);
  });
  t.join();
}

// ... and a thread with no CUDA context at all (a Python thread freeing the
// last DLPack capsule) read device 0 and recorded the fence there, creating
// GPU 0's primary context in a process that only uses GPU 1.
TEST(DeviceContextEmu, ReleaseOnLegacyStreamFromAFreshThreadNeverTouchesDeviceZero) {
  std::shared_ptr<DeviceContext> ctx = Open(1);
  ASSERT_NE(nullptr, ctx);
  const uint64_t binds = emu::PrimaryContextBinds(0);
  std::thread t([&] {
    ConsumerFence fence(ctx->ops.get());
    fence.OnRelease(ConsumerStreams::Of({nullptr, cudaStreamLegacy}));
    EXPECT_FALSE(fence.must_sync_device());
    EXPECT_EQ(2u, fence.pending_events());
    ASSERT_TRUE(fence.BeforeReuse(ctx->stream_handle()).ok());
  });
  t.join();
  EXPECT_EQ(binds, emu::PrimaryContextBinds(0));
}

}  // namespace
}  // namespace shardfeed
