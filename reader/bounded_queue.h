// A bounded blocking queue with cancellation, between pipeline stages:
// Push blocks while full, Pop while empty; both return false once Cancel()
// was called. Thread-safe.
#ifndef SHARDFEED_READER_BOUNDED_QUEUE_H_
#define SHARDFEED_READER_BOUNDED_QUEUE_H_

#include <condition_variable>
#include <deque>
#include <mutex>

namespace shardfeed {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

  bool Push(T value) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return cancelled_ || items_.size() < capacity_; });
    if (cancelled_) return false;
    items_.push_back(std::move(value));
    not_empty_.notify_one();
    return true;
  }

  bool Pop(T* value) {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return cancelled_ || !items_.empty(); });
    if (cancelled_) return false;
    *value = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }

  void Cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool cancelled_ = false;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_BOUNDED_QUEUE_H_
