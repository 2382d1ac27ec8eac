// A CUDA graph captured by the training thread (torch.cuda.graph,
// torch.compile "reduce-overhead": global mode, a non-blocking stream)
// stays valid whatever the loader does meanwhile: fills, releases with or
// without a stream, and its teardown. The emulated runtime refuses what
// CUDA refuses during a capture (allocations and frees, syncs and queries
// in global mode; a device-wide synchronize in any mode) and then
// invalidates the capture, as CUDA does (gpu/emu/capture_api.cc).
// Regression tests for issue 21 defects 3 and 10 and for Release() with no
// stream; each says what the old code did.
#include <cuda_runtime_api.h>

#include <cstring>
#include <set>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "gpu/emu/emu_control.h"
#include "gtest/gtest.h"
#include "reader/emu_loader_test_util.h"
#include "reader/loader.h"

namespace shardfeed {
namespace {

namespace emu = gpu::emu;
using testing::CachedIdOptions;
using testing::ChaosConfig;
using testing::EmuConfig;
using testing::IdOptions;
using testing::kIdRecords;
using testing::OpenIdLoader;

// A global-mode capture on a new non-blocking stream of `device`, begun by
// the calling thread, which is left on `device` with a plain cudaSetDevice
// (a ScopedDevice would relax its capture mode). The destructor ends a
// capture End() did not (a failed assertion must not leave it open).
class GlobalCapture {
 public:
  explicit GlobalCapture(int device) {
    EXPECT_EQ(cudaSuccess, cudaSetDevice(device));
    EXPECT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    begun_ = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal) == cudaSuccess;
    EXPECT_TRUE(begun_);
  }
  ~GlobalCapture() {
    if (begun_) (void)End();
    (void)cudaGetLastError();
    EXPECT_EQ(cudaSuccess, cudaStreamDestroy(stream_));
  }
  GlobalCapture(const GlobalCapture&) = delete;
  GlobalCapture& operator=(const GlobalCapture&) = delete;

  // cudaStreamEndCapture's result: cudaErrorStreamCaptureInvalidated when a
  // call during the capture broke it.
  cudaError_t End() {
    begun_ = false;
    cudaGraph_t graph = nullptr;
    return cudaStreamEndCapture(stream_, &graph);
  }

 private:
  cudaStream_t stream_ = nullptr;
  bool begun_ = false;
};

// ---- Defect 3: the loader's own calls during the capture ----------------

// The training thread takes batches, holds them (the ring grows:
// allocations on this very thread) and releases them on its stream, and
// the loader's threads refill slots (event syncs, copies). Old code: those
// calls were refused (cudaErrorStreamCaptureUnsupported: the loader failed)
// and invalidated the capture.
TEST(GraphCapture, TheLoaderDuringACaptureOnTheTrainingThread) {
  LoaderOptions o = IdOptions(0);
  o.prefetch = 2;
  o.grow_ring = true;
  auto loader = OpenIdLoader(o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  cudaStream_t consumer = nullptr;
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  absl::Cleanup destroy = [&] { EXPECT_EQ(cudaSuccess, cudaStreamDestroy(consumer)); };
  GlobalCapture capture(0);
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
  EXPECT_EQ(cudaSuccess, capture.End()) << "the capture was invalidated";
  EXPECT_EQ(kIdRecords, rows);
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(consumer));
}

// ---- Release() with no stream: a fence, not a device synchronize --------

// The consumer reads each batch on the legacy default stream (stream 0)
// and releases it with no stream while it captures on another stream; the
// loader is torn down before the capture ends. Old code: the refill of a
// slot released with no stream (and the ring's teardown) called
// cudaDeviceSynchronize, which any capture on the device forbids: the fill
// failed and the capture was invalidated. Under chaos delays a refill not
// ordered after the queued reads aborts the test (the emulator's race
// check) or delivers an id twice.
TEST(GraphCapture, ReleaseWithNoStreamDuringACaptureOnAnotherStream) {
  EmuConfig config(ChaosConfig(33));
  ASSERT_TRUE(config.ok());
  int64_t* ids = nullptr;  // every id of the epoch, copied back on stream 0
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  ASSERT_EQ(cudaSuccess, cudaHostAlloc(reinterpret_cast<void**>(&ids), kIdRecords * 8, 0));
  absl::Cleanup free_ids = [&] { EXPECT_EQ(cudaSuccess, cudaFreeHost(ids)); };
  {
    auto loader = OpenIdLoader(IdOptions(0));
    ASSERT_TRUE(loader.ok()) << loader.status();
    GlobalCapture capture(0);
    int64_t rows = 0;
    for (;;) {
      absl::StatusOr<Batch> b = (*loader)->Next();
      if (absl::IsOutOfRange(b.status())) break;
      ASSERT_TRUE(b.ok()) << b.status();
      const Tensor* t = b->Find("id");
      ASSERT_NE(nullptr, t);
      ASSERT_LE(rows * 8 + static_cast<int64_t>(t->bytes), kIdRecords * 8);
      ASSERT_EQ(cudaSuccess,
                cudaStreamWaitEvent(nullptr, static_cast<cudaEvent_t>(b->cuda_event()), 0));
      ASSERT_EQ(cudaSuccess,
                cudaMemcpyAsync(ids + rows, t->data, t->bytes, cudaMemcpyDeviceToHost, nullptr));
      rows += b->size();
      b->Release();
    }
    EXPECT_EQ(kIdRecords, rows);
    loader->reset();  // the ring's teardown waits for the last fences
    EXPECT_EQ(cudaSuccess, capture.End()) << "the capture was invalidated";
  }
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(nullptr));
  std::set<int64_t> seen(ids, ids + kIdRecords);
  EXPECT_EQ(static_cast<size_t>(kIdRecords), seen.size()) << "a slot was refilled under a read";
  EXPECT_EQ(0, *seen.begin());
  EXPECT_EQ(kIdRecords - 1, *seen.rbegin());
  EXPECT_EQ(0u, emu::RaceCount());
}

// ---- Defect 10: teardown under the device guard --------------------------

// The last holder of a resident loader lets go on the thread that captures
// (Python's garbage collector frees a batch whenever it runs). Old code:
// the resident table was freed after the guard's scope, with the thread's
// own (global) capture mode: cudaFree was refused, the capture invalidated
// and the table leaked.
TEST(GraphCapture, TeardownOnTheCapturingThread) {
  auto loader = OpenIdLoader(CachedIdOptions(1));
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ("resident", (*loader)->path_note()) << (*loader)->cache_note();
  ASSERT_LT(0u, emu::DeviceMemoryUsed(1));
  cudaStream_t consumer = nullptr;
  ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  absl::Cleanup destroy = [&] { EXPECT_EQ(cudaSuccess, cudaStreamDestroy(consumer)); };
  absl::StatusOr<Batch> b = (*loader)->Next();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(cudaSuccess,
            cudaStreamWaitEvent(consumer, static_cast<cudaEvent_t>(b->cuda_event()), 0));
  {
    GlobalCapture capture(1);
    b->Release(consumer);
    loader->reset();
    EXPECT_EQ(cudaSuccess, capture.End()) << "the capture was invalidated";
  }
  EXPECT_EQ(0u, emu::DeviceMemoryUsed(1)) << "the table or the ring leaked";
}

}  // namespace
}  // namespace shardfeed
