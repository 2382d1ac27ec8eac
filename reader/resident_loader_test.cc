// The resident cache (LoaderOptions::cache) and image transforms through
// the Loader: exactly-once over seeds and ranks, determinism, record
// indices, partial residency joined by index, the budget fallback, batching,
// transforms equal to the reference on both paths, bad options. Runs on the
// host path here; on a GPU machine the same tests exercise the device
// (tensors are copied back to check them).
#include "reader/resident_loader.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "converter/example_encoder.h"
#include "gtest/gtest.h"
#include "reader/device_test_util.h"
#include "reader/epoch_plan.h"
#include "reader/feature_transforms.h"
#include "reader/loader.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

constexpr int kRecords = 600;

uint8_t Pixel(int64_t id, int k) { return static_cast<uint8_t>(id * 13 + k); }

std::string MakeRecord(int i) {
  ExampleEncoder e;
  std::string image(12, '\0');
  for (int k = 0; k < 12; ++k) image[k] = static_cast<char>(Pixel(i, k));
  std::string blob(i % 7, static_cast<char>('a' + i % 26));
  e.AddInt64("id", i);
  e.AddBytes("image", image);
  e.AddBytes("blob", blob);
  return e.Finish();
}

std::vector<FeatureSpec> Spec() {
  auto spec = ParseSpec("id:int64,image:uint8[1,3,4],blob:bytes");
  EXPECT_TRUE(spec.ok());
  return *spec;
}

// kRecords records over 4 shards, written in id order (so record index == id).
std::string MakeDataset() {
  std::string dir = testing::MakeTempDir();
  int next = 0;
  for (int s = 0; s < 4; ++s) {
    const int n = s == 3 ? kRecords - next : 140 + 10 * s;
    auto w = RecordWriter::Create(absl::StrCat(dir, "/data-", s, ".tfrecord"), {});
    EXPECT_TRUE(w.ok());
    for (int k = 0; k < n; ++k) EXPECT_TRUE((*w)->WriteRecord(MakeRecord(next++)).ok());
    EXPECT_TRUE((*w)->Close().ok());
  }
  return dir;
}

struct Run {
  std::vector<std::vector<int64_t>> batches;  // ids per batch
  std::string cache_note;
  LoaderStats stats;
};

// Reads everything, checking each row's image against its id.
absl::StatusOr<Run> ReadAll(const std::string& dir, LoaderOptions o) {
  auto ds = Dataset::Open({dir});
  if (!ds.ok()) return ds.status();
  if (o.features.empty()) o.features = Spec();
  auto loader = Loader::Create(*std::move(ds), o);
  if (!loader.ok()) return loader.status();
  Run run;
  run.cache_note = (*loader)->cache_note();
  for (;;) {
    auto batch = (*loader)->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    if (!batch.ok()) return batch.status();
    std::vector<int64_t> ids = HostValues<int64_t>(*batch, "id");
    std::vector<uint8_t> image = HostValues<uint8_t>(*batch, "image");
    if (static_cast<int64_t>(ids.size()) != batch->size()) return absl::InternalError("rows");
    for (size_t r = 0; r < ids.size(); ++r) {
      for (int k = 0; k < 12; ++k) {
        if (image[r * 12 + k] != Pixel(ids[r], k)) {
          return absl::InternalError(absl::StrCat("image of record ", ids[r], " is wrong"));
        }
      }
    }
    if (o.record_index) {
      std::vector<int64_t> index = HostValues<int64_t>(*batch, kRecordIndexTensor);
      if (index != ids) return absl::InternalError("__index differs from the ids");
    }
    run.batches.push_back(std::move(ids));
  }
  run.stats = (*loader)->stats();
  return run;
}

std::vector<int64_t> Flatten(const Run& r) {
  std::vector<int64_t> all;
  for (const auto& b : r.batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

LoaderOptions Cached() {
  LoaderOptions o;
  o.cache.enabled = true;
  o.cache.features = {"id", "image"};  // blob (variable length) streams
  o.batch_size = 64;
  return o;
}

// The tests that check values run twice: host memory and GPU 0 (tensors
// copied back; skipped where there is no CUDA device, so they run in
// resident_loader_test_emu on the emulated GPU and on a GPU machine).
class ResidentOn : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!DeviceAvailable(GetParam())) GTEST_SKIP() << "no CUDA device";
  }
  LoaderOptions Plain() const {
    LoaderOptions o;
    o.device = GetParam();
    return o;
  }
  LoaderOptions Cached() const {
    LoaderOptions o = ::shardfeed::Cached();
    o.device = GetParam();
    return o;
  }
};
INSTANTIATE_TEST_SUITE_P(HostAndGpu, ResidentOn, ::testing::Values(-1, 0), DeviceParamName);

TEST_P(ResidentOn, ExactlyOnceOverSeedsAndRanks) {
  const std::string dir = MakeDataset();
  for (bool partial : {false, true}) {
    for (uint64_t seed : {1u, 5u}) {
      for (int world : {1, 2, 3}) {
        std::multiset<int64_t> seen;
        std::set<size_t> batch_counts;
        for (int rank = 0; rank < world; ++rank) {
          LoaderOptions o = Cached();
          if (!partial) o.features = *ParseSpec("id:int64,image:uint8[1,3,4]");
          if (partial) o.cache.features = {"id"};  // labels resident, images stream
          o.seed = seed;
          o.rank = rank;
          o.world_size = world;
          auto run = ReadAll(dir, o);
          ASSERT_TRUE(run.ok()) << run.status();
          EXPECT_NE(std::string::npos, run->cache_note.find("resident cache: id")) << run->cache_note;
          for (int64_t id : Flatten(*run)) seen.insert(id);
          batch_counts.insert(run->batches.size());
          EXPECT_GT(run->stats.cache_bytes, 0);
        }
        SCOPED_TRACE(absl::StrCat("partial ", partial, " seed ", seed, " world ", world));
        EXPECT_EQ(1u, batch_counts.size()) << "ranks got different numbers of batches";
        ASSERT_EQ(static_cast<size_t>(kRecords), seen.size());
        EXPECT_EQ(static_cast<size_t>(kRecords), std::set<int64_t>(seen.begin(), seen.end()).size());
      }
    }
  }
}

TEST_P(ResidentOn, OrderDependsOnlyOnTheSeedAndChangesEachEpoch) {
  const std::string dir = MakeDataset();
  LoaderOptions o = Cached();
  o.features = *ParseSpec("id:int64,image:uint8[1,3,4]");
  o.epochs = 2;
  o.seed = 11;
  auto a = ReadAll(dir, o);
  o.io_threads = 1;
  o.decode_threads = 3;
  auto b = ReadAll(dir, o);
  o.seed = 12;
  auto c = ReadAll(dir, o);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->batches, b->batches);
  EXPECT_NE(a->batches, c->batches);
  ASSERT_EQ(20u, a->batches.size());  // 2 epochs of ceil(600 / 64)
  std::vector<int64_t> all = Flatten(*a);
  std::vector<int64_t> first(all.begin(), all.begin() + kRecords);
  std::vector<int64_t> second(all.begin() + kRecords, all.end());
  EXPECT_NE(first, second);
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(first, second);
}

TEST_P(ResidentOn, BatchingAndRemainders) {
  const std::string dir = MakeDataset();
  LoaderOptions o = Cached();
  auto run = ReadAll(dir, o);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(10u, run->batches.size());
  EXPECT_EQ(24u, run->batches.back().size());
  o.drop_remainder = true;
  o.features = *ParseSpec("id:int64,image:uint8[1,3,4]");
  run = ReadAll(dir, o);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(9u, run->batches.size());
  for (const auto& b : run->batches) EXPECT_EQ(64u, b.size());
}

TEST_P(ResidentOn, RecordIndexMatchesTheDataOnEveryPath) {
  const std::string dir = MakeDataset();
  for (int mode = 0; mode < 3; ++mode) {  // streaming, resident, partial
    LoaderOptions o = mode == 0 ? Plain() : Cached();
    o.batch_size = 50;
    o.record_index = true;
    o.seed = 3;
    if (mode == 1) o.features = *ParseSpec("id:int64,image:uint8[1,3,4]");
    auto run = ReadAll(dir, o);
    ASSERT_TRUE(run.ok()) << "mode " << mode << ": " << run.status();
    EXPECT_EQ(static_cast<size_t>(kRecords), Flatten(*run).size());
  }
}

TEST_P(ResidentOn, TooSmallABudgetStreamsAndSaysWhy) {
  const std::string dir = MakeDataset();
  LoaderOptions o = Cached();
  o.cache.budget_bytes = 1000;  // the table needs 600 * 20 bytes
  auto run = ReadAll(dir, o);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_NE(std::string::npos, run->cache_note.find("streaming instead")) << run->cache_note;
  EXPECT_EQ(0, run->stats.cache_bytes);
  EXPECT_EQ(static_cast<size_t>(kRecords), Flatten(*run).size());
}

// Regression (finding 9): with the cache's use depending on the budget (0:
// free memory at start), a state taken on one path and resumed on another
// was refused as "another dataset or other options".
TEST_P(ResidentOn, ResumeOnAnotherPathSaysWhichAndWhy) {
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok());
  LoaderOptions cached = Cached();
  cached.features = *ParseSpec("id:int64,image:uint8[1,3,4]");  // fully resident
  LoaderOptions plain = cached;
  plain.cache = CacheOptions();
  struct Case {
    LoaderOptions from, to;
    const char* taken;
  };
  LoaderOptions too_small = cached;
  too_small.cache.budget_bytes = 1000;  // does not fit: the planned path
  for (const Case& c : {Case{cached, too_small, "taken on the resident path"},
                        Case{plain, cached, "taken on the planned path"}}) {
    auto first = Loader::Create(*ds, c.from);
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE((*first)->Next().ok());
    LoaderOptions to = c.to;
    to.resume = (*first)->state();
    auto second = Loader::Create(*ds, to);
    ASSERT_TRUE(absl::IsInvalidArgument(second.status())) << second.status();
    EXPECT_NE(std::string::npos, second.status().message().find(c.taken)) << second.status();
    EXPECT_NE(std::string::npos, second.status().message().find("budget")) << second.status();
  }
  auto same = Loader::Create(*ds, cached);  // the same path still resumes
  ASSERT_TRUE(same.ok());
  ASSERT_TRUE((*same)->Next().ok());
  LoaderOptions again = cached;
  again.resume = (*same)->state();
  EXPECT_TRUE(Loader::Create(*ds, again).ok());
}

TEST(ResidentLoader, NoGpuKeepsTheTableInHostMemory) {
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open({dir});
  LoaderOptions o = Cached();
  o.features = Spec();
  o.device = 0;
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  auto b = (*loader)->Next();
  ASSERT_TRUE(b.ok()) << b.status();
  if (FellBackToHost(**loader)) {
    EXPECT_NE(std::string::npos, (*loader)->device_note().find("host memory"));
    EXPECT_NE(std::string::npos, (*loader)->cache_note().find("in host memory"));
    EXPECT_EQ(-1, b->Find("id")->device);
  } else {
    EXPECT_NE(std::string::npos, (*loader)->cache_note().find("in GPU 0"));
    EXPECT_EQ(0, b->Find("id")->device);
    EXPECT_NE(nullptr, b->cuda_event());
  }
}

// The sample number of a batch's first row: global, as epoch * N plus the
// rank's place in the epoch, so no two ranks share a number (nor crops).
// Planned and fully resident paths: the batch's range of the epoch order;
// streaming and partially resident: the rank's rows after those of the
// ranks before it (rank * N / W).
uint64_t FirstSample(const LoaderOptions& o, bool planned, int64_t epoch, int64_t k,
                     int64_t rows_before) {
  const int64_t start = planned ? RankBatch(0, kRecords, o.world_size, o.rank, o.batch_size, k).first
                                : o.rank * (kRecords / o.world_size) + rows_before;
  return static_cast<uint64_t>(epoch) * kRecords + start;
}

// Every transformed image equals the reference applied to the image its id
// implies, as the sample number FirstSample gives.
gpu::ImageTransform OneChannelTransform() {
  gpu::ImageTransform t;
  t.layout = gpu::ImageLayout::kCHW;
  t.channels = 1;
  t.height = 3;
  t.width = 4;
  t.mean = {0.5f};
  t.std = {0.25f};
  t.pad = 1;
  t.flip = true;
  t.seed = 77;
  return t;
}

// `t` (sized as the 12-byte image feature of o.features) in each output type.
void CheckTransforms(LoaderOptions o, const std::string& dir, bool planned = false,
                     gpu::ImageTransform t = OneChannelTransform()) {
  for (gpu::OutputType type :
       {gpu::OutputType::kFloat32, gpu::OutputType::kFloat16, gpu::OutputType::kBFloat16}) {
    t.output = type;
    o.transforms = {{"image", t}};
    o.epochs = 2;
    auto ds = Dataset::Open({dir});
    ASSERT_TRUE(ds.ok());
    auto loader = Loader::Create(*ds, o);
    ASSERT_TRUE(loader.ok()) << loader.status();
    int64_t rows_seen = 0, epoch = 0, k = 0, rows_before = 0;
    for (;;) {
      auto b = (*loader)->Next();
      if (absl::IsOutOfRange(b.status())) break;
      ASSERT_TRUE(b.ok()) << b.status();
      if (b->epoch() != epoch) epoch = b->epoch(), k = 0, rows_before = 0;
      const uint64_t sample = FirstSample(o, planned, epoch, k, rows_before);
      const Tensor* image = b->Find("image");
      ASSERT_NE(nullptr, image);
      EXPECT_EQ((std::vector<int64_t>{b->size(), t.channels, t.height, t.width}), image->shape);
      EXPECT_EQ(gpu::OutputTypeSize(type) * 12 * b->size(), image->bytes);
      std::vector<int64_t> ids = HostValues<int64_t>(*b, "id");
      std::vector<uint8_t> source(ids.size() * 12);
      for (size_t r = 0; r < ids.size(); ++r) {
        for (int k = 0; k < 12; ++k) source[r * 12 + k] = Pixel(ids[r], k);
      }
      std::vector<char> want(image->bytes);
      ASSERT_TRUE(gpu::TransformImagesOnHost(t, source.data(), b->size(), sample, want.data()).ok());
      std::vector<char> got = HostBytes(*b, *image);
      if ((*loader)->device() < 0 || type == gpu::OutputType::kFloat32) {
        if ((*loader)->device() < 0) {
          ASSERT_EQ(want, got) << "batch at sample " << sample;
        } else {
          for (size_t i = 0; i < want.size() / 4; ++i) {
            float w, g;
            std::memcpy(&w, &want[i * 4], 4);
            std::memcpy(&g, &got[i * 4], 4);
            ASSERT_NEAR(w, g, 1e-5f * (1 + std::fabs(w)));
          }
        }
      } else {
        for (size_t i = 0; i < want.size() / 2; ++i) {
          uint16_t w, g;
          std::memcpy(&w, &want[i * 2], 2);
          std::memcpy(&g, &got[i * 2], 2);
          ASSERT_LE(std::abs(int(w) - int(g)), 1);
        }
      }
      ++k;
      rows_before += b->size();
      rows_seen += b->size();
    }
    EXPECT_EQ(2 * (kRecords / o.world_size), rows_seen);
  }
}

TEST_P(ResidentOn, TransformsStreamingLoaderMatchesTheReference) {
  LoaderOptions o = Plain();
  o.features = Spec();
  o.batch_size = 64;
  CheckTransforms(o, MakeDataset());
}

TEST_P(ResidentOn, TransformsResidentLoaderMatchesTheReference) {
  LoaderOptions o = Cached();
  o.features = Spec();
  CheckTransforms(o, MakeDataset());
  o.cache.features = {"image"};  // image resident, id and blob stream
  CheckTransforms(o, MakeDataset());
}

// Regression: the streaming and partially resident paths numbered samples
// per rank (epoch * N/W + position), so every rank drew the same crops and
// flips for its k-th sample. Rank 1 of 2 must get numbers after rank 0's.
TEST_P(ResidentOn, TransformsRanksGetDistinctSampleNumbersOnEveryPath) {
  const std::string dir = MakeDataset();
  for (int rank = 0; rank < 2; ++rank) {
    LoaderOptions o = Plain();
    o.features = Spec();
    o.batch_size = 64;
    o.world_size = 2;
    o.rank = rank;
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    {
      SCOPED_TRACE("planned");
      CheckTransforms(o, dir, /*planned=*/true);
    }
    o.force_streaming = true;
    {
      SCOPED_TRACE("streaming");
      CheckTransforms(o, dir);
    }
    LoaderOptions c = Cached();
    c.features = Spec();
    c.world_size = 2;
    c.rank = rank;
    {
      SCOPED_TRACE("partially resident: blob streams");
      CheckTransforms(c, dir);
    }
    c.features = *ParseSpec("id:int64,image:uint8[1,3,4]");
    SCOPED_TRACE("fully resident");
    CheckTransforms(c, dir, /*planned=*/true);
  }
}

// The CIFAR-10 and ImageNet presets (3 channels: the 12-byte images read as
// [3, 2, 2]) in float32, float16 and bfloat16, streamed and resident.
TEST_P(ResidentOn, TransformsPresetsMatchTheReference) {
  const std::string dir = MakeDataset();
  for (const char* preset : {"cifar10", "imagenet"}) {
    SCOPED_TRACE(preset);
    auto parsed = ParseTransform(absl::StrCat("image=chw,", preset, ",pad=1,flip,seed=5"));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    gpu::ImageTransform t = parsed->transform;
    t.channels = 3;
    t.height = 2;
    t.width = 2;
    ASSERT_EQ(3u, t.mean.size());
    for (bool cached : {false, true}) {
      LoaderOptions o = cached ? Cached() : Plain();
      o.batch_size = 64;
      o.features = *ParseSpec("id:int64,image:uint8[3,2,2],blob:bytes");
      CheckTransforms(o, dir, /*planned=*/false, t);
    }
  }
}

TEST(ResidentLoader, BadOptionsAreRejected) {
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open({dir});
  LoaderOptions o = Cached();
  o.features = Spec();
  o.cache.features = {"blob"};
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, Loader::Create(*ds, o).status().code());
  o.cache.features = {"nope"};
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, Loader::Create(*ds, o).status().code());
  o.cache.features = {};
  gpu::ImageTransform t;  // 3x32x32 does not match image [1,3,4]
  t.channels = 3;
  t.height = 32;
  t.width = 32;
  o.transforms = {{"image", t}};
  auto bad = Loader::Create(*ds, o);
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, bad.status().code());
  EXPECT_NE(std::string::npos, bad.status().message().find("shape is [1,3,4]")) << bad.status();
  o.cache.enabled = false;
  o.transforms = {{"id", t}};
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, Loader::Create(*ds, o).status().code());
}

TEST_P(ResidentOn, GrowRingKeepsHeldBatchesIntact) {
  const std::string dir = MakeDataset();
  for (bool partial : {false, true}) {
    auto ds = Dataset::Open({dir});
    LoaderOptions o = Cached();
    o.features = Spec();
    if (partial) o.cache.features = {"id"};
    o.grow_ring = true;
    auto loader = Loader::Create(*ds, o);
    ASSERT_TRUE(loader.ok()) << loader.status();
    std::vector<Batch> kept;
    std::vector<std::vector<int64_t>> copies;
    for (;;) {
      auto b = (*loader)->Next();
      if (absl::IsOutOfRange(b.status())) break;
      ASSERT_TRUE(b.ok()) << b.status();
      copies.push_back(HostValues<int64_t>(*b, "id"));
      kept.push_back(*std::move(b));
    }
    ASSERT_EQ(10u, kept.size());
    for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(copies[i], HostValues<int64_t>(kept[i], "id"));
  }
}

TEST_P(ResidentOn, HoldingEverySlotIsAnErrorNotADeadlock) {
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open({dir});
  LoaderOptions o = Cached();
  o.features = Spec();
  o.prefetch = 2;
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  auto a = (*loader)->Next();
  auto b = (*loader)->Next();
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = (*loader)->Next();
  EXPECT_EQ(absl::StatusCode::kFailedPrecondition, c.status().code());
  a->Release();
  c = (*loader)->Next();
  EXPECT_TRUE(c.ok()) << c.status();
}

}  // namespace
}  // namespace shardfeed
