// WorkerPool: a fixed set of threads running ParallelFor(n, fn): fn(begin,
// end) over contiguous ranges of [0, n), one per thread; the call returns
// when all are done. The decode pool of the Loader. ParallelFor is called
// from one thread at a time. The destructor joins the threads. Threads that
// cannot be created (std::system_error) are left out: size() is the number
// that started, and with none ParallelFor runs fn(0, n) on the caller.
#ifndef SHARDFEED_READER_WORKER_POOL_H_
#define SHARDFEED_READER_WORKER_POOL_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace shardfeed {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void ParallelFor(size_t n, const std::function<void(size_t, size_t)>& fn);
  int size() const { return count_; }

 private:
  void Work(int index);
  int count_ = 0;  // threads that started; set in the constructor
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  const std::function<void(size_t, size_t)>* fn_ = nullptr;
  size_t n_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_WORKER_POOL_H_
