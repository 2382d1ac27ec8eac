#include "reader/emu_loader_test_util.h"

#include <cuda_runtime_api.h>

#include <set>
#include <string>

#include "gpu/device_guard.h"
#include "gtest/gtest.h"
#include "reader/id_dataset_test_util.h"

namespace shardfeed::testing {
namespace {

const std::string& IdDataset() {
  static const std::string* dir = new std::string(MakeIdDataset(kIdShards, kIdsPerShard));
  return *dir;
}

}  // namespace

LoaderOptions IdOptions(int device) {
  LoaderOptions o;
  o.features = *ParseSpec("id:int64");
  o.batch_size = 64;
  o.epochs = 1;
  o.seed = 5;
  o.device = device;
  return o;
}

LoaderOptions CachedIdOptions(int device) {
  LoaderOptions o = IdOptions(device);
  o.cache.enabled = true;
  return o;
}

absl::StatusOr<std::unique_ptr<Loader>> OpenIdLoader(const LoaderOptions& o) {
  absl::StatusOr<Dataset> ds = Dataset::Open({IdDataset()});
  if (!ds.ok()) return ds.status();
  return Loader::Create(*std::move(ds), o);
}

std::vector<int64_t> HostIds(const Batch& b) {
  const Tensor* t = b.Find("id");
  EXPECT_NE(nullptr, t);
  std::vector<int64_t> ids(t == nullptr ? 0 : t->bytes / 8);
  if (ids.empty()) return ids;
  EXPECT_LE(0, t->device);
  gpu::ScopedDevice on(t->device);
  EXPECT_EQ(cudaSuccess, cudaEventSynchronize(static_cast<cudaEvent_t>(b.cuda_event())));
  EXPECT_EQ(cudaSuccess, cudaMemcpy(ids.data(), t->data, t->bytes, cudaMemcpyDeviceToHost));
  return ids;
}

void ExpectEveryIdOnce(Loader* loader) {
  std::set<int64_t> seen;
  int64_t rows = 0;
  for (;;) {
    absl::StatusOr<Batch> b = loader->Next();
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    for (int64_t id : HostIds(*b)) {
      ASSERT_TRUE(seen.insert(id).second) << "id " << id << " twice";
      ++rows;
    }
  }
  EXPECT_EQ(kIdRecords, rows);
  EXPECT_EQ(0, *seen.begin());
  EXPECT_EQ(kIdRecords - 1, *seen.rbegin());
}

gpu::emu::Config ChaosConfig(uint64_t seed, int max_delay_us) {
  gpu::emu::Config c;
  c.chaos_seed = seed;
  c.chaos_max_delay_us = max_delay_us;
  return c;
}

EmuConfig::EmuConfig(const gpu::emu::Config& c) { ok_ = gpu::emu::Configure(c); }

EmuConfig::~EmuConfig() {
  EXPECT_TRUE(gpu::emu::Configure(gpu::emu::Config())) << "something of the test still lives";
}

}  // namespace shardfeed::testing
