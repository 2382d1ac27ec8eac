// files: any files (audio, text, arrays), from a glob ("data/*.wav") or a
// list file ("@list.csv": one "path" or "path,label" per line, optionally
// under a header line "path,label"; relative paths are relative to the list
// file). Example: data (the file's bytes), filename, and label (int64) when
// the list gives labels: the numbers given, or for names ("cat", "dog") their
// index in the sorted names, which the manifest lists as class_names (as
// image-folder does).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
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
  FilesSource(std::vector<Item> items, bool labeled, std::vector<std::string> classes)
      : items_(std::move(items)), labeled_(labeled), classes_(std::move(classes)) {}
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
    if (labeled_) {
      s.push_back(MakeFeature("label", "int64", 1,
                              classes_.empty() ? "from the list file" : "index into class_names"));
    }
    return s;
  }
  std::vector<std::string> class_names() const override { return classes_; }

 private:
  std::vector<Item> items_;
  bool labeled_;
  std::vector<std::string> classes_;
};

struct ListFile {
  std::vector<Item> items;
  bool labeled = false;
  std::vector<std::string> classes;  // sorted; labels index it (string labels)
};

// A first line naming the columns ("path,label"), not a file.
bool IsHeader(absl::string_view path_field, const std::string& resolved) {
  const std::string name = absl::AsciiStrToLower(path_field);
  return (name == "path" || name == "file" || name == "filename" || name == "filepath") &&
         !PathExists(resolved);
}

// "@LIST": one "path" or "path,label" per line (blank lines and '#' comments
// skipped, an optional header line "path,label"); relative paths are
// relative to the list file. Labels are non-negative integers, or else
// names: then every label is a name, mapped to its index in the sorted names.
absl::StatusOr<ListFile> ReadListFile(const std::string& list_path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(list_path));
  std::string base;
  if (size_t slash = list_path.rfind('/'); slash != std::string::npos) {
    base = list_path.substr(0, slash + 1);
  }
  ListFile out;
  std::vector<std::string> names;  // per item, as written
  bool all_numeric = true, first = true;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(',', 1));
    Item item;
    const absl::string_view path = absl::StripAsciiWhitespace(parts[0]);
    item.path = absl::StartsWith(path, "/") ? std::string(path) : absl::StrCat(base, path);
    if (std::exchange(first, false) && IsHeader(path, item.path)) continue;
    if (parts.size() == 2) {
      if (!out.items.empty() && !out.labeled) {
        return absl::DataLossError(absl::StrCat(list_path, ": line ", line_number,
                                                ": a label, but earlier lines had none"));
      }
      const absl::string_view label = absl::StripAsciiWhitespace(parts[1]);
      if (label.empty()) {
        return absl::DataLossError(absl::StrCat(list_path, ": line ", line_number, ": empty label"));
      }
      all_numeric = all_numeric && absl::SimpleAtoi(label, &item.label) && item.label >= 0;
      names.emplace_back(label);
      out.labeled = true;
    } else if (out.labeled) {
      return absl::DataLossError(
          absl::StrCat(list_path, ": line ", line_number, ": no label, but earlier lines had one"));
    }
    if (!PathExists(item.path)) {
      return absl::NotFoundError(
          absl::StrCat(list_path, ": line ", line_number, ": ", item.path, " does not exist"));
    }
    out.items.push_back(std::move(item));
  }
  if (out.labeled && !all_numeric) {
    std::set<std::string> distinct(names.begin(), names.end());
    out.classes.assign(distinct.begin(), distinct.end());
    for (size_t i = 0; i < out.items.size(); ++i) {
      out.items[i].label = std::lower_bound(out.classes.begin(), out.classes.end(), names[i]) -
                           out.classes.begin();
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> OpenFilesSource(const SourceOptions& o) {
  std::vector<Item> items;
  std::vector<std::string> classes;
  bool labeled = false;
  if (absl::StartsWith(o.input, "@")) {
    ASSIGN_OR_RETURN(ListFile list, ReadListFile(o.input.substr(1)));
    items = std::move(list.items);
    classes = std::move(list.classes);
    labeled = list.labeled;
  } else {
    ASSIGN_OR_RETURN(std::vector<std::string> paths, Glob(o.input));
    for (auto& p : paths) items.push_back({std::move(p), -1});
  }
  if (items.empty()) return absl::InvalidArgumentError(absl::StrCat(o.input, ": no input files"));
  return std::unique_ptr<Source>(new FilesSource(std::move(items), labeled, std::move(classes)));
}

}  // namespace shardfeed
