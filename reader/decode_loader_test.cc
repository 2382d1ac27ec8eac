// The decode stage end to end: `convert image-folder` of real photos
// (testdata/images/hymenoptera), then the Loader decoding image/encoded
// straight into uint8 [B, 224, 224, 3] rows (LoaderOptions::decode):
// training crops keyed by the delivery number (the same batches whatever the
// thread count, new crops each epoch), the evaluation path the same every
// epoch and equal to the decoder's output, and --max-side.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "gtest/gtest.h"
#include "reader/dataset.h"
#include "reader/device_test_util.h"
#include "reader/decode/image_decoder.h"
#include "reader/feature_spec.h"
#include "reader/loader.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

constexpr char kImage[] = "image/encoded";

std::string ConvertPhotos(int max_side) {
  ConvertOptions o;
  o.type = "image-folder";
  o.input = testing::RunfilePath("testdata/images/hymenoptera");
  o.output_dir = testing::MakeTempDir() + "/photos";
  o.threads = 2;
  o.max_side = max_side;
  absl::StatusOr<ConvertSummary> s = Convert(o);
  EXPECT_TRUE(s.ok()) << s.status();
  return o.output_dir;
}

// All batches' image rows and labels, in delivery order.
struct Delivered {
  std::vector<std::string> images;  // one string of 224 * 224 * 3 bytes per row
  std::vector<int64_t> labels;
};

// Batches on `device` (-1: host memory) are copied back row by row.
Delivered Load(const std::string& dir, const std::string& decode, int threads, int epochs,
               int device, std::vector<FeatureSpec>* spec_out = nullptr) {
  Delivered d;
  absl::StatusOr<Dataset> ds = Dataset::Open({dir}, "train");
  EXPECT_TRUE(ds.ok()) << ds.status();
  std::vector<FeatureSpec> spec;
  for (const FeatureSpec& f : SpecFromManifest(*ds->manifest)) {
    if (f.name == kImage || f.name == "image/class/label") spec.push_back(f);
  }
  LoaderOptions o;
  o.features = spec;
  o.decode = {{kImage, decode}};  // resolved by the Loader
  o.batch_size = 3;
  o.shuffle = false;
  o.seed = 9;
  o.epochs = epochs;
  o.decode_threads = threads;
  o.device = device;
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Create(*std::move(ds), o);
  EXPECT_TRUE(loader.ok()) << loader.status();
  if (!loader.ok()) return d;
  if (spec_out) *spec_out = (*loader)->features();
  while (true) {
    absl::StatusOr<Batch> b = (*loader)->Next();
    if (!b.ok()) {
      EXPECT_EQ(b.status().code(), absl::StatusCode::kOutOfRange) << b.status();
      break;
    }
    const Tensor* image = b->Find(kImage);
    const Tensor* label = b->Find("image/class/label");
    EXPECT_EQ(image->dtype, DType::kUint8);
    EXPECT_EQ(image->shape, (std::vector<int64_t>{image->shape[0], 224, 224, 3}));
    EXPECT_EQ(device, image->device);
    const std::vector<char> pixels = HostBytes(*b, *image);
    const std::vector<int64_t> labels = HostValues<int64_t>(*b, label->name);
    for (int64_t r = 0; r < image->shape[0]; ++r) {
      d.images.emplace_back(pixels.data() + r * 224 * 224 * 3, 224 * 224 * 3);
      d.labels.push_back(labels[r]);
    }
  }
  return d;
}

// Decoded batches in host memory and on GPU 0 (skipped without a device).
class DecodeOn : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!DeviceAvailable(GetParam())) GTEST_SKIP() << "no CUDA device";
  }
};
INSTANTIATE_TEST_SUITE_P(HostAndGpu, DecodeOn, ::testing::Values(-1, 0), DeviceParamName);

TEST_P(DecodeOn, TrainingCropsDependOnlyOnSeedAndDeliveryNumber) {
  const std::string dir = ConvertPhotos(0);
  const Delivered one = Load(dir, "image,random_resized_crop=224,flip", 1, 2, GetParam());
  const Delivered two = Load(dir, "image,random_resized_crop=224,flip", 2, 2, GetParam());
  ASSERT_EQ(one.images.size(), 16u);  // 8 training photos, 2 epochs
  EXPECT_TRUE(one.images == two.images);
  EXPECT_EQ(one.labels, two.labels);
  // Epoch 2 delivers the same records (no shuffle) with new crops.
  int same = 0;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(one.labels[i], one.labels[i + 8]);
    same += one.images[i] == one.images[i + 8];
  }
  EXPECT_EQ(same, 0);
}

TEST_P(DecodeOn, EvaluationPathIsTheSameEveryEpochAndMatchesTheDecoder) {
  const std::string dir = ConvertPhotos(0);
  std::vector<FeatureSpec> spec;
  const Delivered d = Load(dir, "image,resize=256,center_crop=224", 2, 2, GetParam(), &spec);
  ASSERT_EQ(d.images.size(), 16u);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(d.images[i] == d.images[i + 8]) << i;
  // Rows equal the decoder's output for one of the photos.
  const std::string photo = testing::ReadBytes(testing::RunfilePath(
      "testdata/images/hymenoptera/train/ants/0013035.jpg"));
  std::string want(224 * 224 * 3, '\0');
  ASSERT_TRUE(CpuImageDecoder()
                  .DecodeInto(photo, spec[0].decode.image, 0, 0,
                              reinterpret_cast<uint8_t*>(want.data()))
                  .ok());
  int found = 0;
  for (const std::string& row : d.images) found += row == want;
  EXPECT_EQ(found, 2);
}

TEST(DecodeLoader, MaxSideReencodesLargerImagesAndRecordsIt) {
  const std::string dir = ConvertPhotos(256);
  absl::StatusOr<Dataset> ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ(ds->manifest->options().max_side(), 256);
  EXPECT_EQ(ds->manifest->options().quality(), 90);
  const Delivered d = Load(dir, "image,resize=256,center_crop=224", 2, 1, -1);
  EXPECT_EQ(d.images.size(), 8u);
  // Re-converting gives the same bytes (deterministic re-encoding).
  const std::string again = ConvertPhotos(256);
  for (const auto& s : ds->manifest->shards()) {
    EXPECT_EQ(testing::ReadBytes(dir + "/" + s.file()), testing::ReadBytes(again + "/" + s.file()));
  }
}

}  // namespace
}  // namespace shardfeed
