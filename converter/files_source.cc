// files: any files (audio, text, arrays), from a glob ("data/*.wav") or a
// list file ("@list.csv": one "path" or "path,label" per line; relative paths
// are relative to the list file). Example: data (the file's bytes), filename,
// and label (int64) when the list gives labels.
#include <sys/stat.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "converter/example_encoder.h"
#include "converter/file_list.h"
#include "converter/source.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

struct Item {
  std::string path;
  int64_t label = -1;
};

class FilesSource : public Source {
 public:
  FilesSource(std::vector<Item> items, bool labeled)
      : items_(std::move(items)), labeled_(labeled) {}
  std::vector<std::string> splits() const override { return {"train"}; }
  size_t num_samples(size_t) const override { return items_.size(); }
  absl::StatusOr<std::string> BuildRecord(size_t, size_t index) const override {
    const Item& item = items_[index];
    ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(item.path));
    ExampleEncoder e;
    e.AddBytes("data", bytes);
    e.AddBytes("filename", item.path);
    if (labeled_) e.AddInt64("label", item.label);
    return e.FinishFramed();
  }
  // From the file's size: planning conversion tasks reads no file.
  absl::StatusOr<uint64_t> RecordSize(size_t, size_t index) const override {
    const Item& item = items_[index];
    struct stat st;
    if (::stat(item.path.c_str(), &st) != 0) return IoError("cannot stat", item.path, errno);
    ExampleEncoder e;
    e.AddZeroBytes("data", static_cast<size_t>(st.st_size));
    e.AddBytes("filename", item.path);
    if (labeled_) e.AddInt64("label", item.label);
    return e.FramedSize();
  }

  std::vector<FeatureSchema> schema() const override {
    std::vector<FeatureSchema> s = {MakeFeature("data", "bytes", 1, "the file's bytes"),
                                    MakeFeature("filename", "bytes", 1, "the path as listed")};
    if (labeled_) s.push_back(MakeFeature("label", "int64", 1, "from the list file"));
    return s;
  }

 private:
  std::vector<Item> items_;
  bool labeled_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> OpenFilesSource(const SourceOptions& o) {
  std::vector<Item> items;
  bool labeled = false;
  if (absl::StartsWith(o.input, "@")) {
    std::string list_path = o.input.substr(1);
    ASSIGN_OR_RETURN(std::string text, ReadFileToString(list_path));
    std::string base;
    if (size_t slash = list_path.rfind('/'); slash != std::string::npos) {
      base = list_path.substr(0, slash + 1);
    }
    int line_number = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++line_number;
      line = absl::StripAsciiWhitespace(line);
      if (line.empty() || absl::StartsWith(line, "#")) continue;
      std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(',', 1));
      Item item;
      item.path = std::string(absl::StripAsciiWhitespace(parts[0]));
      if (!absl::StartsWith(item.path, "/")) item.path = base + item.path;
      if (parts.size() == 2) {
        if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(parts[1]), &item.label) ||
            item.label < 0) {
          return absl::DataLossError(absl::StrCat(list_path, ": line ", line_number,
                                                  ": label '", parts[1],
                                                  "' is not a non-negative integer"));
        }
        labeled = true;
      } else if (labeled) {
        return absl::DataLossError(
            absl::StrCat(list_path, ": line ", line_number, ": no label, but earlier lines had one"));
      }
      if (!PathExists(item.path)) {
        return absl::NotFoundError(
            absl::StrCat(list_path, ": line ", line_number, ": ", item.path, " does not exist"));
      }
      items.push_back(std::move(item));
    }
  } else {
    ASSIGN_OR_RETURN(std::vector<std::string> paths, Glob(o.input));
    for (auto& p : paths) items.push_back({std::move(p), -1});
  }
  if (items.empty()) return absl::InvalidArgumentError(absl::StrCat(o.input, ": no input files"));
  return std::unique_ptr<Source>(new FilesSource(std::move(items), labeled));
}

}  // namespace shardfeed
