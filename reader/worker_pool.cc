#include "reader/worker_pool.h"

#include <system_error>

namespace shardfeed {

WorkerPool::WorkerPool(int threads) {
  const int wanted = threads < 1 ? 1 : threads;
  // Work(i) reads count_ only after ParallelFor, under mu_: the pool runs
  // with the threads that started (none: ParallelFor runs on the caller).
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < wanted; ++i) {
    try {
      threads_.emplace_back([this, i] { Work(i); });
    } catch (const std::system_error&) {
      break;
    }
  }
  count_ = static_cast<int>(threads_.size());
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::ParallelFor(size_t n, const std::function<void(size_t, size_t)>& fn) {
  if (count_ == 0) {  // no thread could start
    if (n > 0) fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  fn_ = &fn;
  n_ = n;
  pending_ = count_;
  ++generation_;
  start_.notify_all();
  done_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
}

void WorkerPool::Work(int index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(size_t, size_t)>* fn;
    size_t n;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      fn = fn_;
      n = n_;
    }
    const size_t t = static_cast<size_t>(count_);  // set before any generation
    const size_t begin = n * index / t, end = n * (index + 1) / t;
    if (begin < end) (*fn)(begin, end);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_all();
    }
  }
}

}  // namespace shardfeed
