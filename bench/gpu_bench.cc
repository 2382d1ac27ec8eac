// GPU measurements (issue: GPU), each against a baseline in the same run:
//   1. host-to-device GB/s from pinned vs pageable memory (cudaMemcpy, 256 MB);
//   2. the loader ring's copy rate (bytes / event-timed copy time) vs
//      cudaMemcpyAsync from pinned memory of batch-sized buffers;
//   3. overlap: a compute kernel's throughput alone vs while the loader
//      streams batches to the device on its own stream;
//   4. epochs/s over DATASET served from the resident device cache vs streamed;
//   5. the fused normalize kernel (uint8 -> float32/float16) in bytes moved
//      per second vs device-to-device cudaMemcpy (read + write).
// Usage: gpu_bench DATASET [--device N] [--quick]   (DATASET: converted CIFAR-10)
// --quick: tiny sizes, a smoke run (the emulated runtime's test of this
// binary); its figures mean nothing. Without a CUDA device it says so and
// exits with status 2.
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "bench/compute_kernel.h"
#include "bench/timing.h"
#include "gpu/cuda_resources.h"
#include "gpu/cuda_status.h"
#include "gpu/device.h"
#include "gpu/image_transform_kernel.h"
#include "reader/dataset.h"
#include "reader/feature_transforms.h"
#include "reader/loader.h"
#include "record/status_macros.h"

namespace shardfeed::bench {
namespace {

using gpu::CudaEvent;
using gpu::CudaStream;
using gpu::DeviceBuffer;
using gpu::PinnedBuffer;

// How much each measurement moves: the real run, or a smoke run (--quick).
struct Sizes {
  size_t copy_bytes = 256 << 20;
  int raw_copies = 200;
  int ring_epochs = 3;
  int compute_elements = 1 << 22, compute_iterations = 2000, compute_launches = 50;
  int streamed_epochs = 5, cached_epochs = 20;
  int64_t normalize_rows = 50000;
  int repeats = 5;
};
Sizes g_sizes;

Sizes QuickSizes() {
  Sizes q;
  q.copy_bytes = 1 << 20;
  q.raw_copies = 4;
  q.ring_epochs = 1;
  q.compute_elements = 1 << 10;
  q.compute_iterations = 4;
  q.compute_launches = 2;
  q.streamed_epochs = 1;
  q.cached_epochs = 2;
  q.normalize_rows = 64;
  q.repeats = 1;
  return q;
}

// Seconds between two events recorded around `fn` on `stream`, best of n.
absl::StatusOr<double> TimeOnStream(cudaStream_t stream, int n,
                                    const std::function<absl::Status()>& fn) {
  ASSIGN_OR_RETURN(CudaEvent a, CudaEvent::Create(true));
  ASSIGN_OR_RETURN(CudaEvent b, CudaEvent::Create(true));
  double best = 1e30;
  for (int i = 0; i < n; ++i) {
    RETURN_IF_CUDA_ERROR(cudaEventRecord(a.get(), stream), "record");
    RETURN_IF_ERROR(fn());
    RETURN_IF_CUDA_ERROR(cudaEventRecord(b.get(), stream), "record");
    RETURN_IF_CUDA_ERROR(cudaEventSynchronize(b.get()), "sync");
    float ms = 0;
    RETURN_IF_CUDA_ERROR(cudaEventElapsedTime(&ms, a.get(), b.get()), "elapsed");
    best = std::min(best, ms / 1e3);
  }
  return best;
}

void Row(const std::string& what, double value, const std::string& unit, double ratio,
         const std::string& baseline) {
  std::printf("%-64s %9.2f %-9s %6.2fx %s\n", what.c_str(), value, unit.c_str(), ratio,
              baseline.c_str());
}

absl::Status CopyBandwidth() {
  const size_t bytes = g_sizes.copy_bytes;
  ASSIGN_OR_RETURN(PinnedBuffer pinned, PinnedBuffer::Create(bytes));
  std::vector<char> pageable(bytes, 1);
  std::memset(pinned.get(), 1, bytes);
  ASSIGN_OR_RETURN(DeviceBuffer dev, DeviceBuffer::Create(bytes));
  ASSIGN_OR_RETURN(CudaStream stream, CudaStream::Create());
  ASSIGN_OR_RETURN(double t_pinned, TimeOnStream(stream.get(), g_sizes.repeats, [&]() -> absl::Status {
    RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(dev.get(), pinned.get(), bytes, cudaMemcpyHostToDevice,
                                         stream.get()), "copy");
    return absl::OkStatus();
  }));
  const double t_pageable = BestOf(g_sizes.repeats, [&] {
    cudaMemcpy(dev.get(), pageable.data(), bytes, cudaMemcpyHostToDevice);
  });
  Row("H2D cudaMemcpyAsync from pinned memory (baseline)", bytes / t_pinned / 1e9, "GB/s", 1.0, "");
  Row("H2D cudaMemcpy from pageable memory", bytes / t_pageable / 1e9, "GB/s",
      t_pinned / t_pageable, "pinned");
  return absl::OkStatus();
}

struct PassResult {
  int64_t records = 0;
  double seconds = 0;
  LoaderStats stats;
};

absl::StatusOr<PassResult> Pass(const std::string& dataset, LoaderOptions o) {
  ASSIGN_OR_RETURN(Dataset ds, Dataset::Open({dataset}, "train"));
  const double t0 = NowSeconds();
  ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Create(std::move(ds), o));
  const double t1 = NowSeconds();
  PassResult r;
  for (;;) {
    absl::StatusOr<Batch> b = loader->Next();
    if (absl::IsOutOfRange(b.status())) break;
    RETURN_IF_ERROR(b.status());
    RETURN_IF_CUDA_ERROR(cudaEventSynchronize(static_cast<cudaEvent_t>(b->cuda_event())),
                         "batch event");
    r.records += b->size();
    b->ReleaseAfter({});  // no device work reads it: no fence (not a device sync per refill)
  }
  r.seconds = NowSeconds() - t1;
  r.stats = loader->stats();
  (void)t0;
  return r;
}

absl::Status RingAndOverlap(const std::string& dataset, int device) {
  LoaderOptions o;
  o.device = device;
  o.batch_size = 256;
  o.epochs = g_sizes.ring_epochs;
  o.prefetch = 3;
  ASSIGN_OR_RETURN(PassResult ring, Pass(dataset, o));
  int64_t row_bytes = 0;
  {
    ASSIGN_OR_RETURN(Dataset ds, Dataset::Open({dataset}, "train"));
    for (const FeatureSpec& f : SpecFromManifest(*ds.manifest)) {
      if (!f.variable_length) row_bytes += f.row_bytes();
    }
  }
  const size_t batch_bytes = 256 * row_bytes;
  ASSIGN_OR_RETURN(PinnedBuffer pinned, PinnedBuffer::Create(batch_bytes));
  ASSIGN_OR_RETURN(DeviceBuffer dev, DeviceBuffer::Create(batch_bytes));
  ASSIGN_OR_RETURN(CudaStream stream, CudaStream::Create());
  ASSIGN_OR_RETURN(double t_raw, TimeOnStream(stream.get(), g_sizes.repeats, [&]() -> absl::Status {
    for (int i = 0; i < g_sizes.raw_copies; ++i) {
      RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(dev.get(), pinned.get(), batch_bytes,
                                           cudaMemcpyHostToDevice, stream.get()), "copy");
    }
    return absl::OkStatus();
  }));
  const double raw = static_cast<double>(g_sizes.raw_copies) * batch_bytes / t_raw;
  const double ring_rate = ring.records * row_bytes / std::max(ring.stats.copy_seconds, 1e-9);
  Row(absl::StrFormat("cudaMemcpyAsync pinned, %zu-byte batches (baseline)", batch_bytes),
      raw / 1e9, "GB/s", 1.0, "");
  Row("loader ring copies (bytes / event-timed copy time)", ring_rate / 1e9, "GB/s",
      ring_rate / raw, "raw pinned copies");
  Row("loader end to end (records/s x row bytes, incl. read+decode)",
      ring.records * row_bytes / ring.seconds / 1e9, "GB/s", ring.records * row_bytes /
      ring.seconds / raw, "raw pinned copies");

  // Overlap: a compute loop alone, then while the loader streams.
  const int n = g_sizes.compute_elements;
  ASSIGN_OR_RETURN(DeviceBuffer work, DeviceBuffer::Create(n * sizeof(float)));
  // On the stream the kernels run on: cudaMemset (legacy stream) is
  // asynchronous and unordered with a non-blocking stream.
  RETURN_IF_CUDA_ERROR(cudaMemsetAsync(work.get(), 0, n * sizeof(float), stream.get()), "memset");
  auto compute = [&]() -> absl::Status {
    for (int i = 0; i < g_sizes.compute_launches; ++i) {
      RETURN_IF_CUDA_ERROR(LaunchBusyCompute(static_cast<float*>(work.get()), n,
                                             g_sizes.compute_iterations,
                                             stream.get()), "compute");
    }
    return absl::OkStatus();
  };
  ASSIGN_OR_RETURN(double t_alone, TimeOnStream(stream.get(), g_sizes.repeats, compute));
  o.epochs = 0;  // forever, until stopped
  absl::Status loader_status;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> streamed{0};
  std::thread feeder([&] {
    auto ds = Dataset::Open({dataset}, "train");
    if (!ds.ok()) { loader_status = ds.status(); return; }
    if (cudaSetDevice(device) != cudaSuccess) return;
    auto loader = Loader::Create(*std::move(ds), o);
    if (!loader.ok()) { loader_status = loader.status(); return; }
    while (!stop.load()) {
      auto b = (*loader)->Next();
      if (!b.ok()) { loader_status = b.status(); return; }
      cudaEventSynchronize(static_cast<cudaEvent_t>(b->cuda_event()));
      streamed += b->size();
      b->ReleaseAfter({});  // as a consumer naming its streams: none reads it
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the pipeline fills
  const int64_t before = streamed.load();
  const double w0 = NowSeconds();
  absl::StatusOr<double> t_busy = TimeOnStream(stream.get(), g_sizes.repeats, compute);
  const double w1 = NowSeconds();
  const int64_t during = streamed.load() - before;
  stop = true;
  feeder.join();
  RETURN_IF_ERROR(loader_status);
  RETURN_IF_ERROR(t_busy.status());
  const double launches = g_sizes.compute_launches;
  Row("compute kernel alone (baseline)", launches / t_alone, "launch/s", 1.0, "");
  Row(absl::StrFormat("compute kernel while the loader streams (%.0f records/s)",
                      during / (w1 - w0)),
      launches / *t_busy, "launch/s", t_alone / *t_busy, "alone");
  return absl::OkStatus();
}

absl::Status CacheVsStreamed(const std::string& dataset, int device) {
  LoaderOptions o;
  o.device = device;
  o.batch_size = 256;
  o.epochs = g_sizes.streamed_epochs;
  ASSIGN_OR_RETURN(PassResult streamed, Pass(dataset, o));
  o.cache.enabled = true;
  o.epochs = g_sizes.cached_epochs;
  ASSIGN_OR_RETURN(PassResult cached, Pass(dataset, o));
  if (cached.stats.cache_bytes == 0) {
    return absl::FailedPreconditionError("the device cache was not used");
  }
  const double e_streamed = g_sizes.streamed_epochs / streamed.seconds,
               e_cached = g_sizes.cached_epochs / cached.seconds;
  Row("epochs/s streamed from shards (baseline)", e_streamed, "epochs/s", 1.0, "");
  Row(absl::StrFormat("epochs/s from the device cache (%.0f MB, loaded in %.2f s)",
                      cached.stats.cache_bytes / 1e6, cached.stats.cache_load_seconds),
      e_cached, "epochs/s", e_cached / e_streamed, "streamed");
  return absl::OkStatus();
}

absl::Status NormalizeBandwidth() {
  const int64_t rows = g_sizes.normalize_rows;
  gpu::ImageTransform t;
  t.channels = 3;
  t.height = 32;
  t.width = 32;
  t.mean = {0.4914f, 0.4822f, 0.4465f};
  t.std = {0.2470f, 0.2435f, 0.2616f};
  const size_t in_bytes = rows * t.input_bytes_per_image();
  ASSIGN_OR_RETURN(DeviceBuffer in, DeviceBuffer::Create(in_bytes));
  ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Create(in_bytes * 4));
  ASSIGN_OR_RETURN(CudaStream stream, CudaStream::Create());
  RETURN_IF_CUDA_ERROR(cudaMemsetAsync(in.get(), 7, in_bytes, stream.get()), "memset");
  // The baseline moves as many bytes as the float16 transform writes: a
  // source of its own of that size (the input buffer holds half of it).
  const size_t copy_bytes = in_bytes * 2;
  ASSIGN_OR_RETURN(DeviceBuffer copy_src, DeviceBuffer::Create(copy_bytes));
  RETURN_IF_CUDA_ERROR(cudaMemsetAsync(copy_src.get(), 7, copy_bytes, stream.get()), "memset");
  ASSIGN_OR_RETURN(double t_copy, TimeOnStream(stream.get(), g_sizes.repeats, [&]() -> absl::Status {
    RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(out.get(), copy_src.get(), copy_bytes,
                                         cudaMemcpyDeviceToDevice, stream.get()), "d2d");
    return absl::OkStatus();
  }));
  const double copy_rate = 2.0 * copy_bytes / t_copy;  // read + write
  Row("device-to-device cudaMemcpy, read + write (baseline)", copy_rate / 1e9, "GB/s", 1.0, "");
  for (gpu::OutputType type : {gpu::OutputType::kFloat32, gpu::OutputType::kFloat16}) {
    t.output = type;
    for (int augment = 0; augment < 2; ++augment) {
      t.pad = augment ? 4 : 0;
      t.flip = augment;
      ASSIGN_OR_RETURN(double tt, TimeOnStream(stream.get(), g_sizes.repeats, [&]() -> absl::Status {
        RETURN_IF_CUDA_ERROR(gpu::LaunchImageTransform(t, static_cast<const uint8_t*>(in.get()),
                                                       rows, 0, out.get(), stream.get()),
                             "transform");
        return absl::OkStatus();
      }));
      const double moved = in_bytes * (1.0 + gpu::OutputTypeSize(type));
      Row(absl::StrFormat("normalize uint8 -> %s NCHW%s", gpu::OutputTypeName(type),
                          augment ? " + crop/flip" : ""),
          moved / tt / 1e9, "GB/s", moved / tt / copy_rate, "d2d copy");
    }
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_bench DATASET [--device N] [--quick]\n");
    return 2;
  }
  const std::string dataset = argv[1];
  int device = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc) {
      device = std::atoi(argv[++i]);
    } else if (arg == "--quick") {
      g_sizes = QuickSizes();
    } else {
      std::fprintf(stderr, "gpu_bench: unknown argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  absl::StatusOr<int> count = gpu::CudaDeviceCount();
  if (!count.ok()) {
    std::fprintf(stderr, "gpu_bench: %s\n", std::string(count.status().message()).c_str());
    return 2;
  }
  auto name = gpu::DescribeDevice(device);
  std::printf("%s\n", name.ok() ? name->c_str() : "?");
  if (cudaSetDevice(device) != cudaSuccess) return 2;
  for (auto step : {std::function<absl::Status()>(CopyBandwidth),
                    std::function<absl::Status()>([&] { return RingAndOverlap(dataset, device); }),
                    std::function<absl::Status()>([&] { return CacheVsStreamed(dataset, device); }),
                    std::function<absl::Status()>(NormalizeBandwidth)}) {
    absl::Status s = step();
    if (!s.ok()) {
      std::fprintf(stderr, "gpu_bench: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace shardfeed::bench

int main(int argc, char** argv) { return shardfeed::bench::Main(argc, argv); }
