// StreamGate (tests): a host function queued on a stream that holds the
// stream's later work back until Open(), so a test can keep work "still
// queued" for as long as it needs.
#ifndef SHARDFEED_GPU_EMU_STREAM_GATE_H_
#define SHARDFEED_GPU_EMU_STREAM_GATE_H_

#include <cuda_runtime_api.h>

#include <condition_variable>
#include <mutex>

namespace shardfeed::gpu::emu {

class StreamGate {
 public:
  // Queues the gate on `s` (cudaLaunchHostFunc's error, if any).
  cudaError_t Enqueue(cudaStream_t s) { return cudaLaunchHostFunc(s, &Wait, this); }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  static void Wait(void* self) {
    auto* g = static_cast<StreamGate*>(self);
    std::unique_lock<std::mutex> lock(g->mu_);
    g->cv_.wait(lock, [g] { return g->open_; });
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace shardfeed::gpu::emu

#endif  // SHARDFEED_GPU_EMU_STREAM_GATE_H_
