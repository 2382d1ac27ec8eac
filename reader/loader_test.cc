// Loader: exactly-once delivery over seeds x thread counts x ranks,
// determinism whatever the thread timing, batching and epochs, corrupt data
// (DATA_LOSS with file and offset, or skipped and counted), early shutdown,
// defaults and variable-length features, the no-GPU fallback, and the GPU
// path where a device exists.
#include "reader/loader.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "converter/example_encoder.h"
#include "gtest/gtest.h"
#include "reader/aligned_host_memory.h"
#include "reader/device_context.h"
#include "reader/device_test_util.h"
#include "reader/fingerprint.h"
#include "record/index.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

constexpr int kRecords = 600;

// Record i: id = i (int64), image = 12 bytes derived from i (uint8 [3, 4]),
// vec = {i, -i} (float32 [2]), blob = i % 7 bytes (variable length).
std::string MakeRecord(int i) {
  ExampleEncoder e;
  std::string image(12, '\0');
  for (int k = 0; k < 12; ++k) image[k] = static_cast<char>(i * 13 + k);
  std::string blob(i % 7, static_cast<char>('a' + i % 26));
  float vec[2] = {static_cast<float>(i), static_cast<float>(-i)};
  e.AddInt64("id", i);
  e.AddBytes("image", image);
  e.AddFloatList("vec", vec);
  e.AddBytes("blob", blob);
  return e.Finish();
}

std::vector<FeatureSpec> Spec() {
  auto spec = ParseSpec("id:int64,image:uint8[3,4],vec:float32[2],blob:bytes");
  EXPECT_TRUE(spec.ok());
  return *spec;
}

// Writes kRecords records over `shards` shards (uneven sizes), with indexes
// for all but the last shard (which the Loader must then count itself).
std::string MakeDataset(int shards) {
  std::string dir = testing::MakeTempDir();
  int next = 0;
  for (int s = 0; s < shards; ++s) {
    int n = s + 1 == shards ? kRecords - next : kRecords / shards + (s % 3) * 5 - 5;
    std::string path = absl::StrCat(dir, "/data-", s, ".tfrecord");
    auto w = RecordWriter::Create(path, {});
    EXPECT_TRUE(w.ok());
    for (int k = 0; k < n; ++k) EXPECT_TRUE((*w)->WriteRecord(MakeRecord(next++)).ok());
    if (s + 1 < shards) {
      EXPECT_TRUE(WriteIndexFile(IndexPathFor(path), (*w)->index()).ok());
    }
    EXPECT_TRUE((*w)->Close().ok());
  }
  return dir;
}

struct Run {
  std::vector<std::vector<int64_t>> batches;  // ids per batch
  Fingerprint fingerprint;
  LoaderStats stats;
};

absl::StatusOr<Run> ReadAll(const std::string& dir, LoaderOptions o) {
  auto ds = Dataset::Open({dir});
  if (!ds.ok()) return ds.status();
  if (o.features.empty()) o.features = Spec();
  auto loader = Loader::Create(*std::move(ds), o);
  if (!loader.ok()) return loader.status();
  Run run;
  for (;;) {
    auto batch = (*loader)->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    if (!batch.ok()) return batch.status();
    // Every tensor is aligned for TensorFlow (64 bytes on the host, 256 on a GPU).
    for (const Tensor& t : batch->tensors()) {
      const size_t want = t.device >= 0 ? 256 : kHostTensorAlignment;
      if (reinterpret_cast<uintptr_t>(t.data) % want != 0) {
        return absl::InternalError(absl::StrCat(t.name, " is not ", want, "-byte aligned"));
      }
    }
    // Device tensors are copied back: every row's values match its id.
    const std::vector<int64_t> ids = HostValues<int64_t>(*batch, "id");
    run.batches.push_back(ids);
    const std::vector<uint8_t> image = HostValues<uint8_t>(*batch, "image");
    const std::vector<float> vec = HostValues<float>(*batch, "vec");
    const std::vector<int64_t> off = HostValues<int64_t>(*batch, "blob/offsets");
    for (int64_t r = 0; r < batch->size(); ++r) {
      const int64_t i = ids[r];
      for (int k = 0; k < 12; ++k) {
        if (image[r * 12 + k] != static_cast<uint8_t>(i * 13 + k)) {
          return absl::InternalError(absl::StrCat("image of record ", i, " is wrong"));
        }
      }
      if (vec[2 * r] != i || vec[2 * r + 1] != -i) return absl::InternalError("vec wrong");
      if (off[r + 1] - off[r] != i % 7) return absl::InternalError("blob length wrong");
    }
    const HostCopy host = CopyToHost(*batch);
    AddRows(host.tensors, batch->size(), (*loader)->features(), &run.fingerprint);
  }
  run.stats = (*loader)->stats();
  return run;
}

std::vector<int64_t> Flatten(const Run& r) {
  std::vector<int64_t> all;
  for (const auto& b : r.batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

// The tests that check values run twice: batches in host memory, and on
// GPU 0 (copied back; skipped where there is no CUDA device, so they run in
// loader_test_emu on the emulated GPU and on a GPU machine).
class LoaderOn : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!DeviceAvailable(GetParam())) GTEST_SKIP() << "no CUDA device";
  }
  LoaderOptions Options() const {
    LoaderOptions o;
    o.device = GetParam();
    return o;
  }
};
INSTANTIATE_TEST_SUITE_P(HostAndGpu, LoaderOn, ::testing::Values(-1, 0), DeviceParamName);

TEST_P(LoaderOn, ExactlyOnceOverSeedsThreadsAndRanks) {
  const std::string dir = MakeDataset(7);
  Fingerprint full;
  {
    LoaderOptions o = Options();
    o.shuffle = false;
    auto run = ReadAll(dir, o);
    ASSERT_TRUE(run.ok()) << run.status();
    full = run->fingerprint;
    ASSERT_EQ(kRecords, full.records);
  }
  for (uint64_t seed : {1u, 2u, 99u}) {
    for (int threads : {1, 3}) {
      for (int world : {1, 2, 3, 4}) {
       for (bool streaming : {false, true}) {
        std::multiset<int64_t> seen;
        Fingerprint sum;
        std::set<size_t> batch_counts;
        for (int rank = 0; rank < world; ++rank) {
          LoaderOptions o = Options();
          o.seed = seed;
          o.io_threads = threads;
          o.decode_threads = threads;
          o.batch_size = 32;
          o.shuffle_buffer = 100;
          o.rank = rank;
          o.world_size = world;
          o.force_streaming = streaming;
          auto run = ReadAll(dir, o);
          ASSERT_TRUE(run.ok()) << run.status();
          for (int64_t id : Flatten(*run)) seen.insert(id);
          sum.Merge(run->fingerprint);
          batch_counts.insert(run->batches.size());
        }
        SCOPED_TRACE(absl::StrCat("seed ", seed, " threads ", threads, " world ", world));
        EXPECT_EQ(1u, batch_counts.size()) << "ranks got different numbers of batches";
        ASSERT_EQ(static_cast<size_t>(kRecords), seen.size());  // 600 divides by 1..4
        EXPECT_EQ(static_cast<size_t>(kRecords), std::set<int64_t>(seen.begin(), seen.end()).size());
        EXPECT_EQ(full.sum, sum.sum);
       }
      }
    }
  }
}

TEST_P(LoaderOn, SameSeedSameOrderWhateverTheThreads) {
  const std::string dir = MakeDataset(5);
  std::vector<std::vector<int64_t>> reference;
  for (int io : {1, 2, 4}) {
    for (int decode : {1, 3}) {
      LoaderOptions o = Options();
      o.seed = 7;
      o.batch_size = 50;
      o.io_threads = io;
      o.decode_threads = decode;
      o.epochs = 2;
      auto run = ReadAll(dir, o);
      ASSERT_TRUE(run.ok()) << run.status();
      if (reference.empty()) reference = run->batches;
      EXPECT_EQ(reference, run->batches) << "io " << io << " decode " << decode;
    }
  }
  LoaderOptions o = Options();
  o.seed = 8;
  o.batch_size = 50;
  o.epochs = 2;
  auto other = ReadAll(dir, o);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(reference, other->batches);
  // The two epochs differ in order but each holds every record once.
  std::vector<int64_t> all = Flatten(*other);
  std::vector<int64_t> e0(all.begin(), all.begin() + kRecords), e1(all.begin() + kRecords, all.end());
  EXPECT_NE(e0, e1);
  std::sort(e0.begin(), e0.end());
  std::sort(e1.begin(), e1.end());
  EXPECT_EQ(e0, e1);
}

TEST_P(LoaderOn, BatchingEpochsAndRemainders) {
  const std::string dir = MakeDataset(3);
  LoaderOptions o = Options();
  o.batch_size = 64;
  o.epochs = 3;
  o.shuffle = false;
  auto run = ReadAll(dir, o);
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(3u * 10, run->batches.size());  // 600 = 9 * 64 + 24
  EXPECT_EQ(24u, run->batches[9].size());
  EXPECT_EQ(0, run->batches[10][0]);        // epoch 2 starts over, in order
  o.drop_remainder = true;
  run = ReadAll(dir, o);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(3u * 9, run->batches.size());
  for (const auto& b : run->batches) EXPECT_EQ(64u, b.size());
}

TEST_P(LoaderOn, CorruptRecordIsDataLossWithFileAndOffset) {
  const std::string dir = MakeDataset(2);
  const std::string shard = dir + "/data-0.tfrecord";
  auto index = ReadIndexFile(IndexPathFor(shard));
  ASSERT_TRUE(index.ok());
  std::string bytes = testing::ReadBytes(shard);
  bytes[(*index)[10].offset + 20] ^= 0x10;  // inside record 10's data
  testing::WriteBytes(shard, bytes);
  LoaderOptions o = Options();
  o.shuffle = false;
  auto run = ReadAll(dir, o);
  ASSERT_EQ(absl::StatusCode::kDataLoss, run.status().code());
  EXPECT_NE(std::string::npos,
            run.status().message().find(absl::StrCat(shard, ":", (*index)[10].offset,
                                                      ": corrupted record: data CRC mismatch")))
      << run.status();
  o.skip_corrupt = true;
  run = ReadAll(dir, o);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(kRecords - 1, run->fingerprint.records);
  EXPECT_EQ(1, run->stats.skipped_records);
}

TEST_P(LoaderOn, MissingFeatureNamesTheRecordOrTakesTheDefault) {
  const std::string dir = MakeDataset(1);
  LoaderOptions o = Options();
  // No record has 'label': a spec error at Create (the sampled record's names).
  o.features = *ParseSpec("id:int64,label:int64");
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok());
  auto loader = Loader::Create(*ds, o);
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code()) << loader.status();
  EXPECT_NE(std::string::npos, loader.status().message().find("feature 'label' is not in"));
  // A record that lacks a feature the others have: DATA_LOSS naming the record.
  const std::string shard = testing::MakeTempDir() + "/data-0.tfrecord";
  {
    auto w = RecordWriter::Create(shard, {});
    ASSERT_TRUE(w.ok());
    for (int i = 0; i < 3; ++i) {
      ExampleEncoder e;
      e.AddInt64("id", i);
      if (i != 1) e.AddInt64("label", i);
      ASSERT_TRUE((*w)->WriteRecord(e.Finish()).ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
  }
  ds = Dataset::Open({shard});
  ASSERT_TRUE(ds.ok());
  o.shuffle = false;
  loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  auto batch = (*loader)->Next();
  ASSERT_EQ(absl::StatusCode::kDataLoss, batch.status().code());
  EXPECT_NE(std::string::npos, batch.status().message().find("data-0.tfrecord:"));
  EXPECT_NE(std::string::npos, batch.status().message().find("feature 'label': missing"));
  o.features = *ParseSpec("id:int64,label:int64=-1");
  loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok());
  batch = (*loader)->Next();
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(-1, HostValues<int64_t>(*batch, "label")[1]);
}

TEST_P(LoaderOn, DestroyingMidEpochStopsPromptly) {
  const std::string dir = MakeDataset(4);
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok());
  LoaderOptions o = Options();
  o.features = Spec();
  o.batch_size = 8;
  o.epochs = 0;  // forever
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok());
  Batch kept;
  {
    auto b = (*loader)->Next();
    ASSERT_TRUE(b.ok());
    kept = *std::move(b);
  }
  const auto t0 = std::chrono::steady_clock::now();
  loader->reset();  // a batch is still held: the ring outlives the loader
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(8, kept.size());
  EXPECT_EQ(8, kept.Find("id")->shape[0]);
}

TEST_P(LoaderOn, HoldingEverySlotIsAnErrorNotADeadlock) {
  const std::string dir = MakeDataset(1);
  auto ds = Dataset::Open({dir});
  LoaderOptions o = Options();
  o.features = Spec();
  o.batch_size = 10;
  o.prefetch = 2;
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok());
  auto a = (*loader)->Next();
  auto b = (*loader)->Next();
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = (*loader)->Next();
  EXPECT_EQ(absl::StatusCode::kFailedPrecondition, c.status().code());
  a->Release();
  c = (*loader)->Next();
  EXPECT_TRUE(c.ok()) << c.status();
}

// Review finding 13: at the end of data with every slot held, Next() said
// FAILED_PRECONDITION ("all slots held") or, with grow_ring, allocated a
// slot; the end of data must come first. Planned and streaming paths.
TEST_P(LoaderOn, EndOfDataWithEverySlotHeldIsOutOfRange) {
  const std::string dir = MakeDataset(2);
  for (bool streaming : {false, true}) {
    for (bool grow : {false, true}) {
      auto ds = Dataset::Open({dir});
      ASSERT_TRUE(ds.ok());
      if (streaming) ds->shards[1].index.clear();
      LoaderOptions o = Options();
      o.features = Spec();
      o.batch_size = kRecords / 2;
      o.prefetch = 2;
      o.grow_ring = grow;
      auto loader = Loader::Create(*ds, o);
      ASSERT_TRUE(loader.ok()) << loader.status();
      EXPECT_EQ(streaming, (*loader)->path_note() != "planned") << (*loader)->path_note();
      auto a = (*loader)->Next();
      auto b = (*loader)->Next();
      ASSERT_TRUE(a.ok() && b.ok());
      for (int i = 0; i < 2; ++i) {  // at once, and again
        auto c = (*loader)->Next();
        EXPECT_EQ(absl::StatusCode::kOutOfRange, c.status().code())
            << c.status() << " streaming " << streaming << " grow " << grow;
      }
    }
  }
}

TEST_P(LoaderOn, HoldingOneBatchWhileReadingOnIsSafeAndKeepsTheOrder) {
  const std::string dir = MakeDataset(3);
  LoaderOptions o = Options();
  o.features = Spec();
  o.batch_size = 16;
  o.prefetch = 2;
  o.seed = 4;
  auto expected = ReadAll(dir, o);
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto ds = Dataset::Open({dir});
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok());
  auto held = (*loader)->Next();  // kept to the end: the ring works with one slot
  ASSERT_TRUE(held.ok());
  const std::vector<int64_t> held_copy = HostValues<int64_t>(*held, "id");
  std::vector<std::vector<int64_t>> got = {held_copy};
  for (;;) {
    auto b = (*loader)->Next(absl::Milliseconds(50));  // timeouts only mean "not yet"
    if (absl::IsDeadlineExceeded(b.status())) continue;
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    got.push_back(HostValues<int64_t>(*b, "id"));
  }
  EXPECT_EQ(expected->batches, got);
  EXPECT_EQ(held_copy, HostValues<int64_t>(*held, "id"));  // not overwritten meanwhile
}

TEST_P(LoaderOn, GrowRingKeepsEveryHeldBatchIntact) {
  const std::string dir = MakeDataset(2);
  LoaderOptions o = Options();
  o.features = Spec();
  o.batch_size = 32;
  o.grow_ring = true;
  auto ds = Dataset::Open({dir});
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok());
  std::vector<Batch> kept;
  std::vector<std::vector<int64_t>> copies;
  for (;;) {
    auto b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    ASSERT_TRUE(b.ok()) << b.status();
    copies.push_back(HostValues<int64_t>(*b, "id"));
    kept.push_back(*std::move(b));
  }
  ASSERT_EQ(copies.size(), kept.size());
  ASSERT_GT(kept.size(), 10u);  // far more than the 2 slots asked for
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(copies[i], HostValues<int64_t>(kept[i], "id")) << "batch " << i;
  }
}

TEST(Loader, NoGpuFallsBackToHostMemory) {
  const std::string dir = MakeDataset(1);
  auto ds = Dataset::Open({dir});
  LoaderOptions o;
  o.features = Spec();
  o.device = 0;
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  auto b = (*loader)->Next();
  ASSERT_TRUE(b.ok());
  if (FellBackToHost(**loader)) {
    EXPECT_NE(std::string::npos, (*loader)->device_note().find("host memory"));
    EXPECT_EQ(-1, b->Find("id")->device);
    EXPECT_EQ(nullptr, b->cuda_event());
  } else {
    EXPECT_EQ(0, b->Find("id")->device);  // on a GPU machine
    EXPECT_NE(nullptr, b->cuda_event());
  }
}

TEST(Loader, BadOptionsAreRejected) {
  const std::string dir = MakeDataset(1);
  auto ds = Dataset::Open({dir});
  LoaderOptions o;
  o.features = Spec();
  o.prefetch = 1;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, Loader::Create(*ds, o).status().code());
  o.prefetch = 2;
  o.rank = 2;
  o.world_size = 2;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, Loader::Create(*ds, o).status().code());
  LoaderOptions no_spec;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, Loader::Create(*ds, no_spec).status().code());
}

// --- Reader v2: regressions of issue 12 and the planned path ---------------

// Old code: the producer looped forever over empty epochs; Next() never
// returned. Now Create refuses.
TEST(Loader, ForeverWithAnEmptyEpochIsRefused) {
  const std::string dir = MakeDataset(1);
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok());
  LoaderOptions o;
  o.features = Spec();
  o.epochs = 0;
  o.batch_size = 400;
  o.world_size = 2;  // 300 records per rank, no full batch of 400
  o.drop_remainder = true;
  for (bool streaming : {false, true}) {
    o.force_streaming = streaming;
    auto loader = Loader::Create(*ds, o);
    EXPECT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code()) << loader.status();
  }
  o.drop_remainder = false;
  o.batch_size = 1;
  o.world_size = kRecords + 1;  // more ranks than records
  o.rank = 3;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, Loader::Create(*ds, o).status().code());
  o.cache.enabled = true;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, Loader::Create(*ds, o).status().code());
}

// Old code: any GPU start error (a bad ordinal included) became host memory.
TEST(Loader, OnlyNoDeviceFallsBackToHost) {
  std::string note;
  auto none = ChooseDevice(0, absl::UnavailableError("no CUDA device: 0 devices"), &note);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(-1, *none);
  EXPECT_NE(std::string::npos, note.find("host memory"));
  note.clear();
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, ChooseDevice(2, 2, &note).status().code());
  EXPECT_EQ(absl::StatusCode::kInternal,
            ChooseDevice(0, absl::InternalError("driver fault"), &note).status().code());
  EXPECT_EQ(1, *ChooseDevice(1, 2, &note));
  EXPECT_EQ(-1, *ChooseDevice(-1, absl::InternalError("not asked"), &note));
  EXPECT_TRUE(note.empty());
}

// Old code: a rank whose part held a corrupt record got fewer batches.
TEST_P(LoaderOn, SkipCorruptKeepsEqualBatchesPerRank) {
  const std::string dir = MakeDataset(2);
  const std::string shard = dir + "/data-0.tfrecord";
  auto index = ReadIndexFile(IndexPathFor(shard));
  ASSERT_TRUE(index.ok());
  std::string bytes = testing::ReadBytes(shard);
  bytes[(*index)[10].offset + 20] ^= 0x10;  // record 10's data
  bytes[(*index)[40].offset + 1] ^= 0x10;   // record 40's length (framing)
  testing::WriteBytes(shard, bytes);
  for (bool streaming : {false, true}) {
    for (uint64_t seed : {0u, 5u}) {
      std::set<size_t> counts;
      int64_t delivered = 0, skipped = 0;
      for (int rank = 0; rank < 2; ++rank) {
        LoaderOptions o = Options();
        o.seed = seed;
        o.batch_size = 50;
        o.drop_remainder = true;
        o.skip_corrupt = true;
        o.rank = rank;
        o.world_size = 2;
        o.force_streaming = streaming;
        auto run = ReadAll(dir, o);
        ASSERT_TRUE(run.ok()) << run.status();
        counts.insert(run->batches.size());
        delivered += run->fingerprint.records;
        skipped += run->stats.skipped_records;
      }
      SCOPED_TRACE(absl::StrCat("streaming ", streaming, " seed ", seed));
      EXPECT_EQ(std::set<size_t>{6}, counts);  // 300 records per rank / 50
      EXPECT_EQ(kRecords, delivered + skipped);
      if (!streaming) {
        EXPECT_EQ(2, skipped);
      }
    }
  }
}

TEST(Loader, IndexedShardsTakeThePlannedPathOthersStream) {
  const std::string dir = MakeDataset(2);
  auto ds = Dataset::Open({dir});
  LoaderOptions o;
  o.features = Spec();
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok());
  EXPECT_EQ("planned", (*loader)->path_note());
  ds->shards[1].index.clear();  // e.g. a manifest's shard without an index file
  loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok());
  EXPECT_NE(std::string::npos, (*loader)->path_note().find("streaming")) << (*loader)->path_note();
}

// Review finding 7: epoch orders are now built outside the lock, once per
// epoch, and kept while a worker fills that epoch. With fewer batches per
// epoch than workers, several epochs are in flight at once: the batches
// must still be those of one worker, every record once per epoch.
TEST_P(LoaderOn, ManyEpochsInFlightKeepTheOrderOfOneWorker) {
  const std::string dir = MakeDataset(4);
  for (ShuffleMode mode : {ShuffleMode::kGlobal, ShuffleMode::kQuasi}) {
    LoaderOptions o = Options();
    o.shuffle_mode = mode;
    o.shuffle_buffer = 50;
    o.seed = 5;
    o.epochs = 6;
    o.batch_size = 250;  // 3 batches per epoch
    o.prefetch = 8;
    o.io_threads = o.decode_threads = 1;
    auto one = ReadAll(dir, o);
    ASSERT_TRUE(one.ok()) << one.status();
    o.io_threads = o.decode_threads = 8;
    auto many = ReadAll(dir, o);
    ASSERT_TRUE(many.ok()) << many.status();
    EXPECT_EQ(one->batches, many->batches);
    std::vector<int64_t> all = Flatten(*many);
    ASSERT_EQ(6u * kRecords, all.size());
    for (int e = 0; e < 6; ++e) {
      std::vector<int64_t> epoch(all.begin() + e * kRecords, all.begin() + (e + 1) * kRecords);
      std::sort(epoch.begin(), epoch.end());
      for (int i = 0; i < kRecords; ++i) ASSERT_EQ(i, epoch[i]) << "epoch " << e;
    }
  }
}

TEST_P(LoaderOn, GlobalAndQuasiShuffleDeliverEveryRecordOnce) {
  const std::string dir = MakeDataset(4);
  for (ShuffleMode mode : {ShuffleMode::kGlobal, ShuffleMode::kQuasi}) {
    LoaderOptions o = Options();
    o.shuffle_mode = mode;
    o.shuffle_buffer = 100;
    o.seed = 3;
    o.epochs = 2;
    auto run = ReadAll(dir, o);
    ASSERT_TRUE(run.ok()) << run.status();
    std::vector<int64_t> all = Flatten(*run);
    ASSERT_EQ(2u * kRecords, all.size());
    std::vector<int64_t> e0(all.begin(), all.begin() + kRecords);
    std::vector<int64_t> e1(all.begin() + kRecords, all.end());
    EXPECT_NE(e0, e1);
    std::sort(e0.begin(), e0.end());
    std::sort(e1.begin(), e1.end());
    for (int i = 0; i < kRecords; ++i) ASSERT_EQ(i, e0[i]);
    EXPECT_EQ(e0, e1);
  }
}

// Reads `n` batches (all when n < 0), returning their ids and the state.
absl::StatusOr<std::pair<std::vector<std::vector<int64_t>>, LoaderState>> ReadSome(
    const std::string& dir, LoaderOptions o, int n) {
  auto ds = Dataset::Open({dir});
  if (!ds.ok()) return ds.status();
  o.features = Spec();
  auto loader = Loader::Create(*std::move(ds), o);
  if (!loader.ok()) return loader.status();
  std::vector<std::vector<int64_t>> got;
  for (int i = 0; n < 0 || i < n; ++i) {
    auto b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    if (!b.ok()) return b.status();
    got.push_back(HostValues<int64_t>(*b, "id"));
  }
  return std::make_pair(got, (*loader)->state());
}

TEST_P(LoaderOn, ResumeContinuesExactly) {
  const std::string dir = MakeDataset(3);
  for (int path = 0; path < 3; ++path) {  // planned, streaming, resident
    LoaderOptions o = Options();
    o.seed = 11;
    o.batch_size = 64;
    o.epochs = 3;
    o.force_streaming = path == 1;
    o.cache.enabled = path == 2;
    auto full = ReadSome(dir, o, -1);
    ASSERT_TRUE(full.ok()) << full.status();
    for (int cut : {0, 4, 10, 13, 29}) {
      auto first = ReadSome(dir, o, cut);
      ASSERT_TRUE(first.ok()) << first.status();
      auto text = first->second.ToString();
      EXPECT_LT(text.size(), 120u) << text;
      auto parsed = LoaderState::Parse(text);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      EXPECT_EQ(first->second, *parsed);
      LoaderOptions r = o;
      r.resume = *parsed;
      auto rest = ReadSome(dir, r, -1);
      ASSERT_TRUE(rest.ok()) << rest.status();
      std::vector<std::vector<int64_t>> joined = first->first;
      joined.insert(joined.end(), rest->first.begin(), rest->first.end());
      EXPECT_EQ(full->first, joined) << "path " << path << " cut " << cut << " " << text;
    }
  }
}

TEST_P(LoaderOn, ElasticResumeDeliversTheRestOfTheEpochOnce) {
  const std::string dir = MakeDataset(3);
  LoaderOptions o = Options();
  o.seed = 2;
  o.batch_size = 25;
  o.world_size = 2;
  std::multiset<int64_t> seen;
  LoaderState state;
  for (int rank = 0; rank < 2; ++rank) {
    o.rank = rank;
    auto part = ReadSome(dir, o, 5);  // 5 batches on each of 2 ranks: 250 records
    ASSERT_TRUE(part.ok()) << part.status();
    for (const auto& b : part->first) seen.insert(b.begin(), b.end());
    state = part->second;
  }
  EXPECT_EQ(250, state.position);
  for (int rank = 0; rank < 3; ++rank) {  // 350 left over 3 ranks
    LoaderOptions r = o;
    r.world_size = 3;
    r.rank = rank;
    r.resume = state;
    auto rest = ReadSome(dir, r, -1);
    ASSERT_TRUE(rest.ok()) << rest.status();
    for (const auto& b : rest->first) seen.insert(b.begin(), b.end());
  }
  // 350 = 3 * 116 + 2: two records are this epoch's remainder.
  EXPECT_EQ(static_cast<size_t>(kRecords - 2), seen.size());
  EXPECT_EQ(seen.size(), std::set<int64_t>(seen.begin(), seen.end()).size());
}

TEST_P(LoaderOn, MismatchedStateIsRefused) {
  const std::string dir = MakeDataset(2);
  LoaderOptions o = Options();
  o.seed = 1;
  auto part = ReadSome(dir, o, 1);
  ASSERT_TRUE(part.ok());
  LoaderOptions other = o;
  other.batch_size = 100;
  other.resume = part->second;
  auto s = ReadSome(dir, other, 1);
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, s.status().code()) << s.status();
  other = o;
  other.seed = 2;
  other.resume = part->second;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, ReadSome(dir, other, 1).status().code());
  other = o;
  other.force_streaming = true;  // another path: another order
  other.resume = part->second;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, ReadSome(dir, other, 1).status().code());
  EXPECT_FALSE(LoaderState::Parse("shardfeed-state v1 seed=1").ok());
}

TEST_P(LoaderOn, TruncatedShardIsDataLossWithFileAndOffsetMappedOrNot) {
  const std::string dir = MakeDataset(2);
  const std::string shard = dir + "/data-0.tfrecord";
  auto index = ReadIndexFile(IndexPathFor(shard));
  ASSERT_TRUE(index.ok());
  std::string bytes = testing::ReadBytes(shard);
  const uint64_t cut = (*index)[50].offset + 7;  // inside record 50's header
  testing::WriteBytes(shard, bytes.substr(0, cut));
  for (bool mapped : {true, false}) {
    LoaderOptions o = Options();
    o.map_shards = mapped;
    auto run = ReadAll(dir, o);
    ASSERT_EQ(absl::StatusCode::kDataLoss, run.status().code()) << run.status();
    // The first truncated record the shuffled order meets: 50 or a later one.
    EXPECT_NE(std::string::npos, run.status().message().find(absl::StrCat(shard, ":")));
    EXPECT_NE(std::string::npos, run.status().message().find("truncated shard")) << run.status();
    o.skip_corrupt = true;
    run = ReadAll(dir, o);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(kRecords - static_cast<int64_t>(index->size()) + 50, run->fingerprint.records);
  }
}

// Review finding 1: a stale index whose last size runs far past the file
// (or near 2^64). Old code: the pread path resized its buffer to that size
// (bad_alloc / length_error in a worker thread: the process died).
TEST_P(LoaderOn, StaleIndexPastTheFileIsDataLossNotACrash) {
  const std::string dir = MakeDataset(2);
  const std::string shard = dir + "/data-0.tfrecord";
  auto index = ReadIndexFile(IndexPathFor(shard));
  ASSERT_TRUE(index.ok());
  const uint64_t last = index->back().offset;
  for (uint64_t size : {uint64_t{99999999999}, UINT64_MAX - last}) {
    std::vector<IndexEntry> stale = *index;
    stale.back().size = size;
    ASSERT_TRUE(WriteIndexFile(IndexPathFor(shard), stale).ok());
    for (bool mapped : {false, true}) {
      for (bool shuffle : {false, true}) {
        LoaderOptions o = Options();
        o.map_shards = mapped;
        o.shuffle = shuffle;
        auto run = ReadAll(dir, o);
        ASSERT_EQ(absl::StatusCode::kDataLoss, run.status().code()) << run.status();
        EXPECT_NE(std::string::npos,
                  run.status().message().find(absl::StrCat(shard, ":", last, ": truncated shard")))
            << run.status();
        o.skip_corrupt = true;
        run = ReadAll(dir, o);
        ASSERT_TRUE(run.ok()) << run.status();
        EXPECT_EQ(kRecords - 1, run->fingerprint.records);
      }
    }
  }
}

// Review finding 10: batch_size * row bytes never bounded; a -1 dimension
// made row_bytes wrap. Old code: vector::assign / new[] threw out of
// Loader::Create (std::terminate outside a test).
TEST(Loader, HugeBatchOrNegativeDimensionIsInvalidArgument) {
  const std::string dir = MakeDataset(1);
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok());
  LoaderOptions o;
  o.features = Spec();
  o.epochs = 1;
  for (int64_t batch : {int64_t{1} << 60, int64_t{1} << 40, INT64_MAX}) {
    o.batch_size = batch;
    auto loader = Loader::Create(*ds, o);
    ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code()) << loader.status();
    EXPECT_NE(std::string::npos, loader.status().message().find("batch_size")) << loader.status();
  }
  o.batch_size = 4;
  o.features[1].shape = {-1, 4};  // image
  auto loader = Loader::Create(*ds, o);
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code()) << loader.status();
  EXPECT_NE(std::string::npos, loader.status().message().find("image")) << loader.status();
  o.features[1].shape = {int64_t{1} << 40, int64_t{1} << 40};  // elements overflow
  loader = Loader::Create(*ds, o);
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, loader.status().code()) << loader.status();
}

// Needs a GPU (skips without): the caller's device is kept, and a held
// batch's stream stays valid after the loader is gone.
TEST(Loader, GpuKeepsTheCallersDeviceAndTheStreamOutlivesTheLoader) {
  std::string note;
  auto ctx = OpenDeviceContext(0, &note);
  if (!ctx.ok() || *ctx == nullptr) GTEST_SKIP() << note;
  const std::string dir = MakeDataset(1);
  auto ds = Dataset::Open({dir});
  int count = 0;
  ASSERT_EQ(cudaSuccess, cudaGetDeviceCount(&count));
  ASSERT_EQ(cudaSuccess, cudaSetDevice(count - 1));
  LoaderOptions o;
  o.features = Spec();
  o.device = 0;
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  auto b = (*loader)->Next();
  ASSERT_TRUE(b.ok());
  int current = -1;
  ASSERT_EQ(cudaSuccess, cudaGetDevice(&current));
  EXPECT_EQ(count - 1, current);
  loader->reset();
  // Still a valid stream (a query could say "not ready": fills queued
  // before the reset may still be running).
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(static_cast<cudaStream_t>(b->cuda_stream())));
  b->Release(nullptr);  // stream 0
}

// Review finding 3 (needs a GPU; skips without): the last batch released
// with a consumer stream, after the loader is gone, frees the ring; the
// free must wait for the work queued on that stream. Old code synchronized
// only the copy stream: the host function below (standing for a kernel
// still reading the batch) had not run when the memory was freed.
TEST(Loader, GpuRingFreedLastWaitsForTheConsumersStream) {
  std::string note;
  auto ctx = OpenDeviceContext(0, &note);
  if (!ctx.ok() || *ctx == nullptr) GTEST_SKIP() << note;
  const std::string dir = MakeDataset(1);
  auto ds = Dataset::Open({dir});
  LoaderOptions o;
  o.features = Spec();
  o.device = 0;
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  auto b = (*loader)->Next();
  ASSERT_TRUE(b.ok());
  loader->reset();
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  cudaStream_t consumer = nullptr;
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  static std::atomic<bool> done{false};
  done = false;
  ASSERT_EQ(cudaSuccess, cudaLaunchHostFunc(
                             consumer,
                             [](void*) {
                               std::this_thread::sleep_for(std::chrono::milliseconds(300));
                               done = true;
                             },
                             nullptr));
  b->ReleaseAfter({consumer});  // the ring's last owner: frees it
  EXPECT_TRUE(done.load());
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(consumer));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(consumer));
}

// A fingerprint is always 16 hex digits, also when it starts with a 0
// (absl::Hex alone printed 15 for one in 16 datasets).
TEST(LoaderState, FingerprintHasSixteenDigits) {
  LoaderState s;
  s.fingerprint = 0x0fedcba987654321ull;
  const std::string text = s.ToString();
  EXPECT_NE(std::string::npos, text.find(" fp=0fedcba987654321")) << text;
  auto parsed = LoaderState::Parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(s, *parsed);
  s.fingerprint = 5;
  EXPECT_NE(std::string::npos, s.ToString().find(" fp=0000000000000005")) << s.ToString();
}

}  // namespace
}  // namespace shardfeed
