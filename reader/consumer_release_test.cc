// Releasing GPU batches with no stream, stream 0, one and several consumer
// streams, and after the device is idle (streams unknown): the consumer's reads of a batch, still queued on its streams
// when the batch is released (held back by a gate), finish before the ring
// refills the slot, so every copy read on a consumer stream holds its own
// batch's records. Needs a CUDA device (skips without); consumer_release_
// test_emu runs it on the emulated GPU with chaos delays, where a refill
// racing a queued read also aborts the test (the emulator's race check).
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "gpu/device.h"
#include "gpu/emu/stream_gate.h"
#include "gtest/gtest.h"
#include "reader/id_dataset_test_util.h"
#include "reader/loader.h"

namespace shardfeed {
namespace {

enum class How { kNoStream, kStream0, kOneStream, kThreeStreams, kDeviceIdle };

std::string HowName(const ::testing::TestParamInfo<How>& info) {
  switch (info.param) {
    case How::kNoStream:
      return "NoStream";
    case How::kStream0:
      return "Stream0";
    case How::kOneStream:
      return "OneStream";
    case How::kThreeStreams:
      return "ThreeStreams";
    case How::kDeviceIdle:
      return "DeviceIdle";
  }
  return "?";
}

class ReleaseWith : public ::testing::TestWithParam<How> {};

// Pinned host memory a consumer stream copies one batch's ids into.
struct PinnedIds {
  int64_t* ids = nullptr;
  size_t n = 0;
  explicit PinnedIds(size_t rows) : n(rows) {
    EXPECT_EQ(cudaSuccess, cudaHostAlloc(reinterpret_cast<void**>(&ids), rows * 8, 0));
  }
  ~PinnedIds() { (void)cudaFreeHost(ids); }
};

TEST_P(ReleaseWith, QueuedConsumerReadsFinishBeforeTheRefill) {
  if (!gpu::CudaDeviceCount().ok()) GTEST_SKIP() << "no CUDA device";
  constexpr int kPerShard = 160, kShards = 2, kBatch = 16;
  auto ds = Dataset::Open({testing::MakeIdDataset(kShards, kPerShard)});
  ASSERT_TRUE(ds.ok()) << ds.status();
  LoaderOptions o;
  o.features = *ParseSpec("id:int64");
  o.batch_size = kBatch;
  o.shuffle = false;
  o.prefetch = 2;  // few slots: each is refilled many times
  o.device = 0;
  auto loader = Loader::Create(*std::move(ds), o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ(0, (*loader)->device());
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  const int n_streams = GetParam() == How::kThreeStreams ? 3 : 1;
  std::vector<cudaStream_t> streams(n_streams, nullptr);
  const bool own_streams = GetParam() != How::kNoStream && GetParam() != How::kStream0;
  if (own_streams) {
    for (auto& s : streams) ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  std::vector<std::unique_ptr<PinnedIds>> copies;
  std::vector<std::unique_ptr<gpu::emu::StreamGate>> gates;
  for (int k = 0;; ++k) {
    auto b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    const Tensor* id = b->Find("id");
    ASSERT_EQ(0, id->device);
    // Each stream reads its share of the rows, after a gate that opens only
    // once the batch is released and the next one requested.
    const int64_t rows = b->size();
    copies.push_back(std::make_unique<PinnedIds>(rows));
    gates.push_back(std::make_unique<gpu::emu::StreamGate>());
    for (int s = 0; s < n_streams; ++s) {
      const int64_t first = rows * s / n_streams, last = rows * (s + 1) / n_streams;
      ASSERT_EQ(cudaSuccess,
                cudaStreamWaitEvent(streams[s], static_cast<cudaEvent_t>(b->cuda_event()), 0));
      ASSERT_EQ(cudaSuccess, gates.back()->Enqueue(streams[s]));
      ASSERT_EQ(cudaSuccess,
                cudaMemcpyAsync(copies.back()->ids + first, static_cast<const int64_t*>(id->data) + first,
                                (last - first) * 8, cudaMemcpyDeviceToHost, streams[s]));
    }
    switch (GetParam()) {
      case How::kNoStream:
        // No stream: the legacy default stream, where these reads are
        // queued; its fence follows the gate, so they are let go first.
        gates.back()->Open();
        b->Release();
        break;
      case How::kStream0:
        b->Release(nullptr);
        break;
      case How::kOneStream:
        b->Release(streams[0]);
        break;
      case How::kThreeStreams:
        b->ReleaseAfter(std::vector<void*>(streams.begin(), streams.end()));
        break;
      case How::kDeviceIdle:
        // Streams unknown (a non-blocking one here): the refill waits for
        // the whole device, gate included, so the reads are let go first.
        gates.back()->Open();
        b->ReleaseAfterDeviceIdle();
        break;
    }
    if (k > 0) gates[k - 1]->Open();  // the previous batch's reads may run now
  }
  gates.back()->Open();
  for (cudaStream_t s : streams) ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(s));
  ASSERT_EQ(static_cast<size_t>(kShards * kPerShard / kBatch), copies.size());
  for (size_t k = 0; k < copies.size(); ++k) {
    for (size_t r = 0; r < copies[k]->n; ++r) {
      ASSERT_EQ(static_cast<int64_t>(k * kBatch + r), copies[k]->ids[r]) << "batch " << k;
    }
  }
  loader->reset();
  if (own_streams) {
    for (cudaStream_t s : streams) EXPECT_EQ(cudaSuccess, cudaStreamDestroy(s));
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu0, ReleaseWith,
                         ::testing::Values(How::kNoStream, How::kStream0, How::kOneStream,
                                         How::kThreeStreams, How::kDeviceIdle),
                         HowName);

}  // namespace
}  // namespace shardfeed
