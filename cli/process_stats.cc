#include "cli/process_stats.h"

#include <sys/resource.h>
#include <time.h>

#include <cstdio>

namespace shardfeed::cli {
namespace {

double MonotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

double g_process_start = 0;

// Priority 101: the first of this binary's own initializers (every object is
// linked statically into it), so the start comes before any other work.
__attribute__((constructor(101))) void RecordProcessStart() { g_process_start = MonotonicSeconds(); }

}  // namespace

CpuAndWall CpuAndWallNow() {
  CpuAndWall t;
  rusage u;
  if (getrusage(RUSAGE_SELF, &u) == 0) {
    t.cpu = u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  }
  t.wall = MonotonicSeconds();
  return t;
}

double ProcessStartSeconds() { return g_process_start; }

double SecondsSinceProcessStart() { return MonotonicSeconds() - g_process_start; }

double PeakRssMb() {
  rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return u.ru_maxrss / 1024.0;  // KiB
}

// The first "FIELD: N kB" line of a /proc file, in MB; 0 when absent.
double ProcFieldMb(const char* path, const char* field_format) {
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, field_format, &kb) == 1) break;
  }
  std::fclose(f);
  return kb / 1024.0;
}

double RssAnonMb() { return ProcFieldMb("/proc/self/status", "RssAnon: %lf kB"); }

double FileHugeMappedMb() {
  return ProcFieldMb("/proc/self/smaps_rollup", "FilePmdMapped: %lf kB");
}

}  // namespace shardfeed::cli
