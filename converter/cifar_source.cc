// CIFAR-10 and CIFAR-100, binary or python layout, from the extracted folder
// or straight from the downloaded .tar.gz. The batches are held in memory
// (CIFAR-10 and -100 are ~180 MB each; the archive cannot be read at random).
//
// Example layout (compatible with TensorFlow's CIFAR-10 tutorial script):
//   image   bytes, the raw 3072 bytes as CIFAR stores them: 1024 R, 1024 G,
//           1024 B, each 32x32 row-major (uint8 [3, 32, 32])
//   label   int64 (CIFAR-100: the fine label, 0..99)
//   coarse_label int64 (CIFAR-100 only, 0..19)
//   height, width, depth  int64 32, 32, 3
#include <dirent.h>

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "converter/example_encoder.h"
#include "converter/pickle_reader.h"
#include "converter/source.h"
#include "converter/tar_reader.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

constexpr int kPixels = 3072;

struct Batch {
  std::string name;   // e.g. "data_batch_1" (for errors: origin path)
  std::string origin;  // file or "archive:member"
  std::string bytes;  // file contents (owned)
  // Image i's pixels are pixels.substr(i * stride, 3072): the binary layout
  // interleaves label bytes (stride 3073 or 3074), the pickle does not.
  absl::string_view pixels;
  size_t stride = kPixels;
  std::vector<int> labels;
  std::vector<int> coarse;
};

std::string Basename(absl::string_view p) {
  size_t slash = p.rfind('/');
  return std::string(slash == absl::string_view::npos ? p : p.substr(slash + 1));
}

// Binary layout: per record <coarse label> <label> (CIFAR-100) or <label>,
// then 3072 pixel bytes.
absl::Status ParseBinary(Batch* b, bool cifar100) {
  const size_t label_bytes = cifar100 ? 2 : 1;
  const size_t record = label_bytes + kPixels;
  if (b->bytes.empty()) return absl::DataLossError(absl::StrCat(b->origin, ": empty batch file"));
  if (b->bytes.size() % record != 0) {
    size_t whole = b->bytes.size() / record;
    return DataLossAt(b->origin, whole * record,
                      absl::StrCat("batch size ", b->bytes.size(), " is not a whole number of ",
                                   record, "-byte records (", whole, " records and ",
                                   b->bytes.size() - whole * record, " bytes left over)"));
  }
  const size_t n = b->bytes.size() / record;
  for (size_t i = 0; i < n; ++i) {
    const char* r = b->bytes.data() + i * record;
    if (cifar100) b->coarse.push_back(static_cast<unsigned char>(r[0]));
    b->labels.push_back(static_cast<unsigned char>(r[label_bytes - 1]));
  }
  // A view into b->bytes (see ParsePython on why views survive moves).
  b->pixels = absl::string_view(b->bytes).substr(label_bytes);
  b->stride = record;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> IntList(const PickleValue* v, const std::string& origin,
                                         const char* key) {
  if (v == nullptr || v->kind != PickleValue::Kind::kList) {
    return absl::DataLossError(absl::StrCat(origin, ": no '", key, "' list in the pickle"));
  }
  std::vector<int> out;
  for (const auto& item : v->items) {
    if (item->kind != PickleValue::Kind::kInt) {
      return absl::DataLossError(absl::StrCat(origin, ": '", key, "' holds a non-integer"));
    }
    out.push_back(static_cast<int>(item->integer));
  }
  return out;
}

absl::Status ParsePython(Batch* b, bool cifar100) {
  ASSIGN_OR_RETURN(auto root, ParsePickle(b->bytes, b->origin));
  if (root->kind != PickleValue::Kind::kDict) {
    return absl::DataLossError(absl::StrCat(b->origin, ": the pickle is not a dict"));
  }
  const PickleValue* data = root->Find("data");
  if (data == nullptr) return absl::DataLossError(absl::StrCat(b->origin, ": no 'data' entry"));
  ASSIGN_OR_RETURN(NumpyUint8Array array, AsNumpyUint8Array(*data, b->origin));
  if (array.shape.size() != 2 || array.shape[1] != kPixels) {
    return absl::DataLossError(absl::StrCat(b->origin, ": 'data' is not an N x 3072 array"));
  }
  const char* label_key = cifar100 ? "fine_labels" : "labels";
  ASSIGN_OR_RETURN(b->labels, IntList(root->Find(label_key), b->origin, label_key));
  if (cifar100) {
    ASSIGN_OR_RETURN(b->coarse, IntList(root->Find("coarse_labels"), b->origin, "coarse_labels"));
  }
  if (static_cast<int64_t>(b->labels.size()) != array.shape[0]) {
    return absl::DataLossError(absl::StrCat(b->origin, ": ", b->labels.size(), " labels for ",
                                            array.shape[0], " images"));
  }
  // A view into b->bytes: it stays valid when the Batch moves, since a
  // string this large lives on the heap and moving keeps its buffer.
  b->pixels = array.data;
  return absl::OkStatus();
}

absl::Status CheckLabels(const Batch& b, bool cifar100, size_t label_bytes) {
  const int limit = cifar100 ? 100 : 10;
  const bool binary = label_bytes > 0;
  for (size_t i = 0; i < b.labels.size(); ++i) {
    bool bad_fine = b.labels[i] < 0 || b.labels[i] >= limit;
    bool bad_coarse = cifar100 && (b.coarse[i] < 0 || b.coarse[i] >= 20);
    if (bad_fine || bad_coarse) {
      std::string what = absl::StrCat("record ", i, ": ", bad_fine ? "label " : "coarse label ",
                                      bad_fine ? b.labels[i] : b.coarse[i], " is out of range 0..",
                                      bad_fine ? limit - 1 : 19);
      if (binary) return DataLossAt(b.origin, i * (label_bytes + kPixels), what);
      return absl::DataLossError(absl::StrCat(b.origin, ": ", what));
    }
  }
  return absl::OkStatus();
}

class CifarSource : public Source {
 public:
  CifarSource(bool cifar100, std::vector<std::string> split_names,
              std::vector<std::vector<Batch>> splits, std::vector<std::string> classes,
              std::vector<std::string> coarse_classes)
      : cifar100_(cifar100), split_names_(std::move(split_names)), splits_(std::move(splits)),
        classes_(std::move(classes)), coarse_classes_(std::move(coarse_classes)) {
    for (const auto& split : splits_) {
      std::vector<size_t> starts;
      size_t total = 0;
      for (const Batch& b : split) {
        starts.push_back(total);
        total += b.labels.size();
      }
      starts_.push_back(std::move(starts));
      totals_.push_back(total);
    }
  }

  std::vector<std::string> splits() const override { return split_names_; }
  size_t num_samples(size_t split) const override { return totals_[split]; }

  absl::StatusOr<std::string> BuildRecord(size_t split, size_t index) const override {
    const auto& starts = starts_[split];
    size_t b = std::upper_bound(starts.begin(), starts.end(), index) - starts.begin() - 1;
    const Batch& batch = splits_[split][b];
    size_t i = index - starts[b];
    ExampleEncoder e;
    e.AddBytes("image", batch.pixels.substr(i * batch.stride, kPixels));
    e.AddInt64("label", batch.labels[i]);
    if (cifar100_) e.AddInt64("coarse_label", batch.coarse[i]);
    e.AddInt64("height", 32);
    e.AddInt64("width", 32);
    e.AddInt64("depth", 3);
    return e.FinishFramed();
  }

  std::vector<FeatureSchema> schema() const override {
    std::vector<FeatureSchema> s = {
        MakeFeature("image", "bytes", 1,
                    "raw pixels as CIFAR stores them: 1024 R, 1024 G, 1024 B, 32x32 row-major",
                    "uint8", {3, 32, 32}),
        MakeFeature("label", "int64", 1, cifar100_ ? "fine label, 0..99" : "label, 0..9"),
        MakeFeature("height", "int64", 1, "32"),
        MakeFeature("width", "int64", 1, "32"),
        MakeFeature("depth", "int64", 1, "3"),
    };
    if (cifar100_) {
      s.insert(s.begin() + 2, MakeFeature("coarse_label", "int64", 1, "coarse label, 0..19"));
    }
    return s;
  }
  std::vector<std::string> class_names() const override { return classes_; }
  std::vector<std::string> coarse_class_names() const override { return coarse_classes_; }

 private:
  bool cifar100_;
  std::vector<std::string> split_names_;
  std::vector<std::vector<Batch>> splits_;
  std::vector<std::vector<size_t>> starts_;
  std::vector<size_t> totals_;
  std::vector<std::string> classes_;
  std::vector<std::string> coarse_classes_;
};

// The files of the input (folder or archive), keyed by base name.
struct InputFiles {
  std::map<std::string, std::string> contents;  // base name → bytes
  std::map<std::string, std::string> origin;    // base name → path for errors
};

bool IsCifarFile(absl::string_view base) {
  return absl::StartsWith(base, "data_batch_") || absl::StartsWith(base, "test_batch") ||
         base == "train" || base == "test" || base == "train.bin" || base == "test.bin" ||
         base == "batches.meta" || base == "batches.meta.txt" || base == "meta" ||
         base == "fine_label_names.txt" || base == "coarse_label_names.txt";
}

absl::StatusOr<InputFiles> LoadInput(const std::string& input) {
  InputFiles files;
  if (IsTarArchiveName(input)) {
    ASSIGN_OR_RETURN(auto members, ReadTarMembers(input, [](absl::string_view name) {
                       return IsCifarFile(Basename(name));
                     }));
    for (auto& [name, data] : members) {
      std::string base = Basename(name);
      files.origin[base] = absl::StrCat(input, ":", name);
      files.contents[base] = std::move(data);
    }
    return files;
  }
  DIR* dir = opendir(input.c_str());
  if (dir == nullptr) return IoError("cannot open the input folder", input, errno);
  std::vector<std::string> names;
  while (dirent* e = readdir(dir)) {
    if (IsCifarFile(e->d_name)) names.push_back(e->d_name);
  }
  closedir(dir);
  for (const std::string& name : names) {
    std::string path = absl::StrCat(input, "/", name);
    ASSIGN_OR_RETURN(files.contents[name], ReadFileToString(path));
    files.origin[name] = path;
  }
  return files;
}

std::vector<std::string> Lines(absl::string_view text) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) out.emplace_back(line);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> PickledNames(const InputFiles& f, const std::string& file,
                                                      const char* key) {
  auto it = f.contents.find(file);
  if (it == f.contents.end()) return std::vector<std::string>{};
  ASSIGN_OR_RETURN(auto root, ParsePickle(it->second, f.origin.at(file)));
  const PickleValue* names = root->Find(key);
  std::vector<std::string> out;
  if (names == nullptr) return out;
  for (const auto& n : names->items) out.emplace_back(n->string);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> OpenCifarSource(bool cifar100, const SourceOptions& o) {
  ASSIGN_OR_RETURN(InputFiles files, LoadInput(o.input));
  const std::string kind = cifar100 ? "CIFAR-100" : "CIFAR-10";
  // Which layout? Binary files end in .bin.
  bool binary = files.contents.count(cifar100 ? "train.bin" : "data_batch_1.bin") ||
                files.contents.count(cifar100 ? "test.bin" : "test_batch.bin");
  std::vector<std::string> train_names, test_names;
  for (const auto& [name, _] : files.contents) {
    bool is_bin = absl::EndsWith(name, ".bin");
    if (is_bin != binary) continue;
    std::string stem(absl::StripSuffix(name, ".bin"));
    if (cifar100 ? stem == "train" : absl::StartsWith(stem, "data_batch_")) train_names.push_back(name);
    if (cifar100 ? stem == "test" : stem == "test_batch") test_names.push_back(name);
  }
  if (train_names.empty() && test_names.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        o.input, ": no ", kind, " batches found (expected ",
        cifar100 ? "train/test or train.bin/test.bin" : "data_batch_N and test_batch (.bin)",
        " in the folder or archive)"));
  }
  std::sort(train_names.begin(), train_names.end());

  auto load = [&](const std::string& name) -> absl::StatusOr<Batch> {
    Batch b;
    b.name = std::string(absl::StripSuffix(name, ".bin"));
    b.origin = files.origin[name];
    b.bytes = std::move(files.contents[name]);
    RETURN_IF_ERROR(binary ? ParseBinary(&b, cifar100) : ParsePython(&b, cifar100));
    RETURN_IF_ERROR(CheckLabels(b, cifar100, binary ? (cifar100 ? 2 : 1) : 0));
    return b;
  };

  std::vector<std::string> split_names;
  std::vector<std::vector<Batch>> splits;
  std::vector<Batch> train, validation, test;
  for (const std::string& name : train_names) {
    ASSIGN_OR_RETURN(Batch b, load(name));
    if (!o.validation_from.empty() && b.name == o.validation_from) {
      validation.push_back(std::move(b));
    } else {
      train.push_back(std::move(b));
    }
  }
  for (const std::string& name : test_names) {
    ASSIGN_OR_RETURN(Batch b, load(name));
    test.push_back(std::move(b));
  }
  if (!o.validation_from.empty() && validation.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--validation-from ", o.validation_from,
                                                   ": no such training batch in ", o.input));
  }
  if (!train.empty()) split_names.push_back("train"), splits.push_back(std::move(train));
  if (!validation.empty()) {
    split_names.push_back("validation"), splits.push_back(std::move(validation));
  }
  // TensorFlow's CIFAR-10 script calls the test split "eval" when it splits
  // off a validation set.
  if (!test.empty()) {
    split_names.push_back(o.validation_from.empty() ? "test" : "eval");
    splits.push_back(std::move(test));
  }

  std::vector<std::string> classes, coarse;
  if (cifar100) {
    if (files.contents.count("fine_label_names.txt")) {
      classes = Lines(files.contents["fine_label_names.txt"]);
      coarse = Lines(files.contents["coarse_label_names.txt"]);
    } else {
      ASSIGN_OR_RETURN(classes, PickledNames(files, "meta", "fine_label_names"));
      ASSIGN_OR_RETURN(coarse, PickledNames(files, "meta", "coarse_label_names"));
    }
  } else if (files.contents.count("batches.meta.txt")) {
    classes = Lines(files.contents["batches.meta.txt"]);
  } else {
    ASSIGN_OR_RETURN(classes, PickledNames(files, "batches.meta", "label_names"));
  }
  return std::unique_ptr<Source>(new CifarSource(cifar100, std::move(split_names),
                                                 std::move(splits), std::move(classes),
                                                 std::move(coarse)));
}

}  // namespace shardfeed
