// OrderedPipeline: runs produce(i) for i in [0, n) on worker threads and
// hands the results to consume(i, result) on the calling thread, in order of
// i. At most `window` results wait at a time, so memory stays bounded
// whatever n is (back-pressure: workers stop when the consumer falls behind).
//
// The first error (from produce or consume), or cancel() returning true,
// stops the workers promptly; Run() returns that error after joining them.
// cancel() is called on the calling thread only. If the process cannot start
// `threads` threads, those that started do the work (RESOURCE_EXHAUSTED if
// none could).
#ifndef SHARDFEED_CONVERTER_ORDERED_PIPELINE_H_
#define SHARDFEED_CONVERTER_ORDERED_PIPELINE_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace shardfeed {

template <typename T>
absl::Status RunOrderedPipeline(size_t n, int threads, size_t window,
                                const std::function<absl::StatusOr<T>(size_t)>& produce,
                                const std::function<absl::Status(size_t, T&)>& consume,
                                const std::function<bool()>& cancel = [] { return false; }) {
  if (threads < 1) threads = 1;
  if (window < 1) window = 1;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<absl::StatusOr<T>>> slots(window);
  size_t next_to_produce = 0;
  size_t next_to_consume = 0;
  bool stop = false;

  auto worker = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || next_to_produce >= n ||
                                   next_to_produce < next_to_consume + window; });
        if (stop || next_to_produce >= n) return;
        i = next_to_produce++;
      }
      absl::StatusOr<T> result = produce(i);
      {
        std::lock_guard<std::mutex> lock(mu);
        slots[i % window] = std::move(result);
      }
      cv.notify_all();
    }
  };
  // A thread that cannot be started (the process's limit) is not fatal:
  // the pipeline runs with those that started, or fails without any.
  std::vector<std::thread> pool;
  std::string thread_error;
  for (int t = 0; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error& e) {
      thread_error = e.what();
      break;
    }
  }
  if (pool.empty()) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot start a thread: ", thread_error));
  }

  absl::Status status;
  for (size_t i = 0; i < n && status.ok(); ++i) {
    std::optional<absl::StatusOr<T>> result;
    {
      std::unique_lock<std::mutex> lock(mu);
      while (!slots[i % window].has_value()) {
        if (cancel()) break;
        cv.wait_for(lock, std::chrono::milliseconds(100));
      }
      result.swap(slots[i % window]);
    }
    if (!result.has_value()) {
      status = absl::CancelledError("interrupted");
      break;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      next_to_consume = i + 1;
    }
    cv.notify_all();
    if (!result->ok()) {
      status = result->status();
      break;
    }
    status = consume(i, **result);
    if (status.ok() && cancel()) status = absl::CancelledError("interrupted");
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  cv.notify_all();
  for (auto& t : pool) t.join();
  return status;
}

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_ORDERED_PIPELINE_H_
