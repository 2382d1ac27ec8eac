// MNIST idx files (gzipped or not): train-images-idx3-ubyte[.gz] with
// train-labels-idx1-ubyte[.gz], and/or the t10k-* pair for the test split.
// Example: image (784 raw bytes, uint8 [28, 28]), label, height, width, depth.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "converter/example_encoder.h"
#include "converter/source.h"
#include "record/compression.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/input_stream.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

uint32_t Be32(const std::string& s, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data() + at);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// The file at `base` or `base.gz`, decompressed; NOT_FOUND if neither exists.
absl::StatusOr<std::pair<std::string, std::string>> LoadIdx(const std::string& base) {
  for (const std::string& path : {base + ".gz", base}) {
    if (!PathExists(path)) continue;
    ASSIGN_OR_RETURN(auto file, ReadableFile::Open(path));
    auto in = MakeInputStream(std::move(file), path == base ? Compression::kNone
                                                             : Compression::kGzip);
    std::string out;
    char buf[1 << 16];
    for (;;) {
      ASSIGN_OR_RETURN(size_t n, in->Read(buf, sizeof(buf)));
      if (n == 0) break;
      out.append(buf, n);
    }
    return std::make_pair(path, std::move(out));
  }
  return absl::NotFoundError(absl::StrCat(base, "[.gz] not found"));
}

struct Split {
  std::string name;
  std::string images;  // idx3 payload after the 16-byte header
  std::string labels;  // idx1 payload after the 8-byte header
  size_t count = 0;
};

class MnistSource : public Source {
 public:
  explicit MnistSource(std::vector<Split> splits) : splits_(std::move(splits)) {}
  std::vector<std::string> splits() const override {
    std::vector<std::string> names;
    for (const auto& s : splits_) names.push_back(s.name);
    return names;
  }
  size_t num_samples(size_t split) const override { return splits_[split].count; }
  absl::StatusOr<std::string> BuildRecord(size_t split, size_t i) const override {
    const Split& s = splits_[split];
    ExampleEncoder e;
    e.AddBytes("image", absl::string_view(s.images).substr(16 + i * 784, 784));
    e.AddInt64("label", static_cast<unsigned char>(s.labels[8 + i]));
    e.AddInt64("height", 28);
    e.AddInt64("width", 28);
    e.AddInt64("depth", 1);
    return e.FinishFramed();
  }
  std::vector<FeatureSchema> schema() const override {
    return {MakeFeature("image", "bytes", 1, "raw grayscale pixels, 28x28 row-major", "uint8",
                        {28, 28}),
            MakeFeature("label", "int64", 1, "digit, 0..9"),
            MakeFeature("height", "int64", 1, "28"), MakeFeature("width", "int64", 1, "28"),
            MakeFeature("depth", "int64", 1, "1")};
  }
  std::vector<std::string> class_names() const override {
    return {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  }

 private:
  std::vector<Split> splits_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> OpenMnistSource(const SourceOptions& o) {
  std::vector<Split> splits;
  for (const auto& [name, stem] : {std::make_pair("train", "train"), std::make_pair("test", "t10k")}) {
    auto images = LoadIdx(absl::StrCat(o.input, "/", stem, "-images-idx3-ubyte"));
    auto labels = LoadIdx(absl::StrCat(o.input, "/", stem, "-labels-idx1-ubyte"));
    if (absl::IsNotFound(images.status()) && absl::IsNotFound(labels.status())) continue;
    RETURN_IF_ERROR(images.status());
    RETURN_IF_ERROR(labels.status());
    const auto& [ipath, idata] = *images;
    const auto& [lpath, ldata] = *labels;
    if (idata.size() < 16 || Be32(idata, 0) != 2051) {
      return DataLossAt(ipath, 0, "not an idx3 image file (magic 2051 expected)");
    }
    if (ldata.size() < 8 || Be32(ldata, 0) != 2049) {
      return DataLossAt(lpath, 0, "not an idx1 label file (magic 2049 expected)");
    }
    size_t n = Be32(idata, 4);
    if (Be32(idata, 8) != 28 || Be32(idata, 12) != 28) {
      return DataLossAt(ipath, 8, "images are not 28x28");
    }
    if (idata.size() != 16 + n * 784) {
      return DataLossAt(ipath, 16, absl::StrCat("header says ", n, " images (", 16 + n * 784,
                                                " bytes) but the data has ", idata.size()));
    }
    if (Be32(ldata, 4) != n || ldata.size() != 8 + n) {
      return DataLossAt(lpath, 4, absl::StrCat("expected ", n, " labels"));
    }
    for (size_t i = 0; i < n; ++i) {
      if (static_cast<unsigned char>(ldata[8 + i]) > 9) {
        return DataLossAt(lpath, 8 + i, absl::StrCat("label ", int{static_cast<unsigned char>(ldata[8 + i])},
                                                     " is out of range 0..9"));
      }
    }
    splits.push_back({name, std::move(images->second), std::move(labels->second), n});
  }
  if (splits.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.input, ": no MNIST idx files (train-images-idx3-ubyte[.gz], "
                              "t10k-images-idx3-ubyte[.gz] and their labels)"));
  }
  return std::unique_ptr<Source>(new MnistSource(std::move(splits)));
}

}  // namespace shardfeed
