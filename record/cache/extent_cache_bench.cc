// Costs of the extent cache on this machine, against plain file writes of
// the same bytes in the same folder (the baseline, in the same run):
//   bazel run -c opt //record/cache:extent_cache_bench -- DIR
// DIR should be on the disk the cache would use (e.g. ~/.cache); the
// benchmark makes and removes its own subfolder there.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "record/cache/extent_cache.h"
#include "record/file.h"

namespace shardfeed {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// User + system time of this process (less disturbed by a busy machine
// than the wall clock).
double CpuSeconds() {
  struct rusage u;
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

std::string FirstLine(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

ExtentKey Key(int i, uint64_t length) {
  return ExtentKey{"s3://bench/shard-" + std::to_string(i), "etag", 0, length};
}

// Plain writes: open, write, close, then unlink (the baseline for a fill).
double PlainWriteSeconds(const std::string& dir, const std::string& bytes, int count) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    const std::string path = absl::StrCat(dir, "/plain-", i % 32);
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) return -1;
    ::close(fd);
  }
  const double s = Seconds(start);
  for (int i = 0; i < 32; ++i) ::unlink(absl::StrCat(dir, "/plain-", i).c_str());
  return s;
}

// Reserve + Insert of `count` extents of `bytes` into a cache of `limit`.
double FillSeconds(ExtentCache& cache, const std::string& bytes, int count, int first_key) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    auto room = cache.Reserve(bytes.size());
    auto entry = room.ok() ? cache.Insert(Key(first_key + i, bytes.size()), std::move(*room), bytes)
                           : room.status();
    if (!entry.ok()) {
      std::fprintf(stderr, "%s\n", entry.status().ToString().c_str());
      return -1;
    }
  }
  return Seconds(start);
}

int Run(const std::string& parent) {
  const std::string dir = parent + "/extent_cache_bench." + std::to_string(::getpid());
  if (!MakeDirs(dir).ok()) return 1;
  std::printf("%s\n%s (nproc %ld)\n", FirstLine("/proc/cpuinfo", "model name").c_str(),
              FirstLine("/proc/loadavg", "").c_str(), ::sysconf(_SC_NPROCESSORS_ONLN));

  // 1. Filling with 8 MiB extents, evicting once the 256 MiB limit is full.
  const std::string big(8 << 20, 'x');
  constexpr int kBig = 96;
  const double plain = PlainWriteSeconds(dir, big, kBig);
  auto cache = ExtentCache::Open({dir + "/c1", 256 << 20});
  if (!cache.ok()) return 1;
  const double fill = FillSeconds(**cache, big, kBig, 0);
  std::printf("fill 8 MiB extents: cache %.0f MB/s, plain write+close %.0f MB/s (%.2fx)\n",
              kBig * 8.388608 / fill, kBig * 8.388608 / plain, plain / fill);

  // 2. Hits: Find (open, lock, stat, touch, map) + release, bytes read once.
  const auto hits_start = std::chrono::steady_clock::now();
  uint64_t sum = 0;
  constexpr int kHits = 2000;
  for (int i = 0; i < kHits; ++i) {
    auto found = (*cache)->Find(Key(kBig - 1 - i % 16, big.size()));
    if (!found.ok() || *found == nullptr) return 1;
    sum += static_cast<unsigned char>((*found)->bytes()[i % big.size()]);
  }
  std::printf("hit (Find + release): %.1f us (checksum %llu)\n",
              Seconds(hits_start) / kHits * 1e6, (unsigned long long)sum);

  // 3. Many small entries: every Reserve lists the folder and evicts one.
  const std::string small(64 << 10, 'y');
  auto many = ExtentCache::Open({dir + "/c2", 1024 * small.size()});
  if (!many.ok() || FillSeconds(**many, small, 1024, 0) < 0) return 1;
  constexpr int kSteady = 500;
  const double cpu_before = CpuSeconds();
  const double steady = FillSeconds(**many, small, kSteady, 1024);
  std::printf("64 KiB insert into a full folder of 1024 entries: %.0f us each, %.0f us of CPU\n",
              steady / kSteady * 1e6, (CpuSeconds() - cpu_before) / kSteady * 1e6);
  const auto scans_start = std::chrono::steady_clock::now();
  constexpr int kScans = 200;
  for (int i = 0; i < kScans; ++i) {
    if (!(*many)->used_bytes().ok()) return 1;
  }
  std::printf("listing that folder (used_bytes): %.0f us each\n",
              Seconds(scans_start) / kScans * 1e6);
  cache->reset();
  many->reset();
  return std::system(("rm -rf '" + dir + "'").c_str()) == 0 ? 0 : 1;
}

}  // namespace
}  // namespace shardfeed

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  return shardfeed::Run(argv[1]);
}
