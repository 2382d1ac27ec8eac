// Process-wide clocks and memory figures for `shardfeed bench`: the wall
// time since the process started, the CPU time of all its threads, peak and
// anonymous resident memory. Read-only, thread-safe; no errors (a figure
// the kernel does not give reads 0).
#ifndef SHARDFEED_CLI_PROCESS_STATS_H_
#define SHARDFEED_CLI_PROCESS_STATS_H_

namespace shardfeed::cli {

struct CpuAndWall {
  double cpu = 0;   // user + system seconds of this process, all threads
  double wall = 0;  // CLOCK_MONOTONIC seconds
};

CpuAndWall CpuAndWallNow();

// CLOCK_MONOTONIC at the process's start: taken by the binary's first static
// initializer (before main, opening files, mapping shards, starting
// threads). Only exec and the dynamic loader (about a millisecond) come
// before it: a stopwatch outside the process sees those too.
double ProcessStartSeconds();

// Seconds since ProcessStartSeconds().
double SecondsSinceProcessStart();

// Peak resident set size of this process, in MB (ru_maxrss), including
// mapped page-cache pages.
double PeakRssMb();

// Anonymous resident memory now (RssAnon: not counting mapped file pages of
// the page cache), in MB; 0 where /proc is absent.
double RssAnonMb();

// File pages mapped as 2 MiB pages now (FilePmdMapped in
// /proc/self/smaps_rollup), in MB: how much of the mapped shards the kernel
// gave huge pages (it does where the page cache holds 2 MiB folios); 0 where
// /proc is absent.
double FileHugeMappedMb();

}  // namespace shardfeed::cli

#endif  // SHARDFEED_CLI_PROCESS_STATS_H_
