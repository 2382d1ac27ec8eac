// Test helpers for loaders on the emulated CUDA runtime (tests linked only
// against //gpu/emu:cudart): a 4096-record id dataset (an 8-byte "id" per
// record), loader options over it, ids copied back from a device batch, and
// a scoped reconfiguration of the emulated machine. Failures are reported
// through gtest; every helper is for the test's main thread.
#ifndef SHARDFEED_READER_EMU_LOADER_TEST_UTIL_H_
#define SHARDFEED_READER_EMU_LOADER_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "gpu/emu/emu_control.h"
#include "reader/loader.h"

namespace shardfeed::testing {

constexpr int kIdShards = 4, kIdsPerShard = 1024;
constexpr int64_t kIdRecords = int64_t{kIdShards} * kIdsPerShard;
constexpr int64_t kIdTableBytes = kIdRecords * 8;  // the resident table of "id"

// "id:int64", 64 rows a batch, one epoch, on `device` (-1: host).
LoaderOptions IdOptions(int device);
// The same with the resident cache.
LoaderOptions CachedIdOptions(int device);
// A loader over the id dataset (made once per process).
absl::StatusOr<std::unique_ptr<Loader>> OpenIdLoader(const LoaderOptions& o);

// The ids of batch b, copied back from the device (after its copy event).
std::vector<int64_t> HostIds(const Batch& b);
// Reads the loader to its end: every id of the epoch exactly once.
void ExpectEveryIdOnce(Loader* loader);

// The default emulated machine with chaos delays (up to `max_delay_us`
// before each queued operation, seeded by `seed`).
gpu::emu::Config ChaosConfig(uint64_t seed, int max_delay_us = 200);

// Reconfigures the emulated machine for one test and restores the default
// (two 4 GiB GPUs, a CUDA 13 driver) after it; the test fails if something
// of it (a stream, an event, memory) still lives then.
class EmuConfig {
 public:
  explicit EmuConfig(const gpu::emu::Config& c);
  ~EmuConfig();
  EmuConfig(const EmuConfig&) = delete;
  EmuConfig& operator=(const EmuConfig&) = delete;
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

}  // namespace shardfeed::testing

#endif  // SHARDFEED_READER_EMU_LOADER_TEST_UTIL_H_
