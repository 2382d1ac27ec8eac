// Thread creation failing: the loader's threads (planned workers, the
// streaming producer, I/O threads, the decode pool) must give a Status or run
// with the threads that started, never std::terminate. The failure is real:
// the address-space limit is lowered until no thread stack fits. Its own
// binary, as the limit is process-wide.
#include <sys/resource.h>

#include <atomic>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "reader/id_dataset_test_util.h"
#include "reader/loader.h"
#include "reader/worker_pool.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizer = true;  // they reserve terabytes of address space
#else
constexpr bool kSanitizer = false;
#endif

// Lowers RLIMIT_AS to the current size + 2 MiB (no 8 MiB thread stack
// fits) for the object's life.
class NoRoomForThreads {
 public:
  NoRoomForThreads() {
    getrlimit(RLIMIT_AS, &old_);
    std::ifstream status("/proc/self/status");
    std::string line;
    uint64_t kb = 0;
    while (std::getline(status, line)) {
      if (line.rfind("VmSize:", 0) == 0) kb = std::stoull(line.substr(7));
    }
    rlimit low = old_;
    low.rlim_cur = (kb + 2048) * 1024;
    ok_ = kb > 0 && setrlimit(RLIMIT_AS, &low) == 0;
  }
  ~NoRoomForThreads() { setrlimit(RLIMIT_AS, &old_); }
  bool ok() const { return ok_; }

 private:
  rlimit old_;
  bool ok_ = false;
};

std::string MakeDataset() { return testing::MakeIdDataset(2, 50); }

// Old code: std::thread threw std::system_error out of the constructor.
TEST(ThreadStart, PoolWithoutThreadsRunsOnTheCaller) {
  if (kSanitizer) GTEST_SKIP() << "address-space limit under a sanitizer";
  std::atomic<size_t> covered{0};
  {
    NoRoomForThreads limit;
    ASSERT_TRUE(limit.ok());
    WorkerPool pool(4);
    EXPECT_EQ(0, pool.size());
    pool.ParallelFor(10, [&](size_t b, size_t e) { covered += e - b; });
  }
  EXPECT_EQ(10u, covered.load());
}

// Old code: std::terminate in Loader::Create (planned workers, streaming
// producer and decode pool).
TEST(ThreadStart, LoaderCreateIsAStatusNotACrash) {
  if (kSanitizer) GTEST_SKIP() << "address-space limit under a sanitizer";
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  for (bool streaming : {false, true}) {
    LoaderOptions o;
    o.features = *ParseSpec("id:int64");
    o.batch_size = 10;
    o.shuffle = false;
    o.force_streaming = streaming;
    absl::Status status;
    {
      NoRoomForThreads limit;
      ASSERT_TRUE(limit.ok());
      auto loader = Loader::Create(*ds, o);
      status = loader.status();
    }
    EXPECT_EQ(absl::StatusCode::kResourceExhausted, status.code()) << status;
    EXPECT_NE(std::string::npos, status.message().find("thread")) << status;
  }
}

}  // namespace
}  // namespace shardfeed
