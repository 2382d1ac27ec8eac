// image-folder: a class-per-subfolder tree (ImageNet style), optionally with
// split folders above the classes (root/train/<class>/..., root/val/...).
// Features follow TensorFlow's ImageNet / TF-Slim conventions:
//   image/encoded (the file's bytes), image/format, image/class/label,
//   image/class/text, image/filename, image/height, image/width
// with height/width read from the JPEG/PNG/GIF header (no decoding). Label
// ids come from the sorted class names. With max_side > 0, JPEG/PNG images
// whose longer side exceeds it are stored re-encoded (jpeg_encoder.h): a
// JPEG of that side, image/format "jpeg", the new height/width. Files that
// are not images, or whose header is broken (a truncated file), are skipped
// with a warning (DATA_LOSS with --strict); GIFs are stored with a warning
// (the decode stage reads JPEG and PNG only).
#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/example_encoder.h"
#include "converter/file_list.h"
#include "converter/image_header.h"
#include "converter/source.h"
#include "reader/decode/image_codecs.h"
#include "reader/decode/image_decoder.h"
#include "reader/decode/jpeg_encoder.h"
#include "record/file.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

// One split's images, compactly (listing must stay flat for millions of
// files): the names relative to their class folder in one arena, 16 bytes
// per image besides; full paths are built when a record is.
class ImageList {
 public:
  explicit ImageList(std::string root) : root_(std::move(root)) {}
  void Add(absl::string_view rel, int64_t label) {
    entries_.push_back({names_.size(), static_cast<uint32_t>(rel.size()),
                        static_cast<int32_t>(label)});
    names_.append(rel.data(), rel.size());
  }
  void Shrink() {
    entries_.shrink_to_fit();
    names_.shrink_to_fit();
  }
  size_t size() const { return entries_.size(); }
  int64_t label(size_t i) const { return entries_[i].label; }
  absl::string_view filename(size_t i) const {
    return absl::string_view(names_).substr(entries_[i].offset, entries_[i].length);
  }
  std::string path(size_t i, const std::vector<std::string>& classes) const {
    return absl::StrCat(root_, "/", classes[label(i)], "/", filename(i));
  }

 private:
  struct Entry {
    uint64_t offset;
    uint32_t length;
    int32_t label;
  };
  std::string root_;  // the split's folder
  std::string names_;
  std::vector<Entry> entries_;
};

// A JPEG or PNG cut short after its header (a copy that did not finish)
// passes the header check but not the decode stage, which needs a JPEG's
// end-of-image marker and a PNG's IEND chunk: DATA_LOSS as the decoder says
// it. Reads the last bytes only, and the whole file when they are not the
// usual end (e.g. data after the marker, which the decoder accepts).
// Only damage (DATA_LOSS) is refused here; images the decoder refuses for
// their size are the decode stage's to report.
absl::Status VerifyImageStatus(absl::string_view bytes) {
  absl::Status s = VerifyImage(bytes, /*header_only=*/true);
  return absl::IsDataLoss(s) ? s : absl::OkStatus();
}

absl::Status CheckImageEnd(ReadableFile& file, absl::string_view head) {
  static constexpr absl::string_view kJpegEnd("\xff\xd9", 2);
  static constexpr absl::string_view kPngEnd("IEND\xae\x42\x60\x82", 8);
  const absl::string_view want = LooksLikeJpeg(head) ? kJpegEnd : kPngEnd;
  if (head.size() < file.size()) {
    char tail[8];
    ASSIGN_OR_RETURN(size_t n, file.ReadAt(file.size() - want.size(), tail, want.size()));
    if (absl::string_view(tail, n) == want) return absl::OkStatus();
    std::string whole(file.size(), '\0');
    ASSIGN_OR_RETURN(size_t got, file.ReadAt(0, &whole[0], whole.size()));
    whole.resize(got);
    return VerifyImageStatus(whole);
  }
  if (absl::EndsWith(head, want)) return absl::OkStatus();
  return VerifyImageStatus(head);
}

class ImageFolderSource : public Source {
 public:
  ImageFolderSource(std::vector<std::string> split_names, std::vector<ImageList> images,
                    std::vector<std::string> classes, int64_t skipped,
                    std::vector<std::string> warnings, int max_side, int quality)
      : split_names_(std::move(split_names)), images_(std::move(images)),
        classes_(std::move(classes)), skipped_(skipped), warnings_(std::move(warnings)),
        max_side_(max_side), quality_(quality) {}

  std::vector<std::string> splits() const override { return split_names_; }
  size_t num_samples(size_t split) const override { return images_[split].size(); }

  absl::StatusOr<std::string> BuildRecord(size_t split, size_t index) const override {
    const ImageList& list = images_[split];
    const std::string path = list.path(index, classes_);
    ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
    ASSIGN_OR_RETURN(ImageInfo info, ReadImageInfo(bytes, path));
    if (max_side_ > 0 && std::max(info.width, info.height) > max_side_ && info.format != "gif") {
      absl::StatusOr<Reencoded> r = ShrinkToMaxSide(bytes, max_side_, quality_);
      if (!r.ok()) {
        return absl::Status(r.status().code(),
                            absl::StrCat(path, ": --max-side: ", r.status().message()));
      }
      bytes = std::move(r->bytes);
      info.format = "jpeg";
      info.width = r->width;
      info.height = r->height;
    }
    ExampleEncoder e;
    e.AddBytes("image/encoded", bytes);
    AddFeatures(split, index, info, &e);
    return e.FinishFramed();
  }

  // From the file's size and header (conversion tasks plan without reading
  // whole images), unless --max-side re-encodes it.
  absl::StatusOr<uint64_t> RecordSize(size_t split, size_t index) const override {
    const std::string path = images_[split].path(index, classes_);
    ASSIGN_OR_RETURN(auto file, ReadableFile::Open(path));
    std::string head(std::min<uint64_t>(file->size(), 64 << 10), '\0');
    ASSIGN_OR_RETURN(size_t n, file->ReadAt(0, &head[0], head.size()));
    absl::StatusOr<ImageInfo> info = ReadImageInfo(absl::string_view(head.data(), n), path);
    if (!info.ok() ||
        (max_side_ > 0 && std::max(info->width, info->height) > max_side_ && info->format != "gif")) {
      return Source::RecordSize(split, index);
    }
    ExampleEncoder e;
    e.AddZeroBytes("image/encoded", file->size());
    AddFeatures(split, index, *info, &e);
    return e.FramedSize();
  }

  // Every feature but image/encoded.
  void AddFeatures(size_t split, size_t index, const ImageInfo& info, ExampleEncoder* e) const {
    const ImageList& list = images_[split];
    e->AddBytes("image/format", info.format);
    e->AddInt64("image/class/label", list.label(index));
    e->AddBytes("image/class/text", classes_[list.label(index)]);
    e->AddBytes("image/filename", list.filename(index));
    e->AddInt64("image/height", info.height);
    e->AddInt64("image/width", info.width);
  }

  std::vector<FeatureSchema> schema() const override {
    return {MakeFeature("image/encoded", "bytes", 1, "the image file's bytes (JPEG, PNG or GIF)"),
            MakeFeature("image/format", "bytes", 1, "jpeg, png or gif"),
            MakeFeature("image/class/label", "int64", 1, "index into class_names"),
            MakeFeature("image/class/text", "bytes", 1, "the class name"),
            MakeFeature("image/filename", "bytes", 1, "path relative to the class folder"),
            MakeFeature("image/height", "int64", 1, "from the image header"),
            MakeFeature("image/width", "int64", 1, "from the image header")};
  }
  std::vector<std::string> class_names() const override { return classes_; }
  int64_t skipped_inputs() const override { return skipped_; }
  std::vector<std::string> warnings() const override { return warnings_; }

 private:
  std::vector<std::string> split_names_;
  std::vector<ImageList> images_;
  std::vector<std::string> classes_;
  int64_t skipped_;
  std::vector<std::string> warnings_;
  int max_side_, quality_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> OpenImageFolderSource(const SourceOptions& o) {
  ASSIGN_OR_RETURN(DirEntries top, ListDir(o.input));
  if (top.dirs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.input, ": no class folders (expected ROOT/<class>/<image> or "
                              "ROOT/<split>/<class>/<image>)"));
  }
  // Split folders hold only folders; class folders hold files.
  bool has_splits = top.files.empty();
  std::vector<std::string> split_dirs;
  if (has_splits) {
    for (const auto& d : top.dirs) {
      ASSIGN_OR_RETURN(DirEntries e, ListDir(absl::StrCat(o.input, "/", d)));
      if (!e.files.empty() || e.dirs.empty()) has_splits = false;
    }
  }
  split_dirs = has_splits ? top.dirs : std::vector<std::string>{""};

  std::set<std::string> class_set;
  for (const auto& s : split_dirs) {
    ASSIGN_OR_RETURN(DirEntries e, ListDir(s.empty() ? o.input : absl::StrCat(o.input, "/", s)));
    class_set.insert(e.dirs.begin(), e.dirs.end());
  }
  std::vector<std::string> classes(class_set.begin(), class_set.end());

  std::vector<std::string> split_names;
  std::vector<ImageList> images;
  int64_t skipped = 0, gifs = 0;
  std::string first_gif;
  std::vector<std::string> warnings;
  for (const auto& s : split_dirs) {
    std::string split_root = s.empty() ? o.input : absl::StrCat(o.input, "/", s);
    ImageList list(split_root);
    for (size_t label = 0; label < classes.size(); ++label) {
      std::string class_dir = absl::StrCat(split_root, "/", classes[label]);
      if (!PathExists(class_dir)) continue;
      ASSIGN_OR_RETURN(std::vector<std::string> files, ListFilesRecursive(class_dir));
      for (const auto& rel : files) {
        std::string path = absl::StrCat(class_dir, "/", rel);
        ASSIGN_OR_RETURN(auto file, ReadableFile::Open(path));
        // The first page: the signature and, for nearly every file, the
        // header with the size (a JPEG's EXIF can push its frame header
        // further; such files are checked when their record is built).
        char head[4096];
        ASSIGN_OR_RETURN(size_t n, file->ReadAt(0, head, sizeof(head)));
        const absl::string_view bytes(head, n);
        std::string problem;  // "PATH: what is wrong"
        if (!LooksLikeImage(bytes)) {
          problem = absl::StrCat(path, ": not a JPEG, PNG or GIF image");
        } else if (absl::StatusOr<ImageInfo> info = ReadImageInfo(bytes, path); !info.ok()) {
          // The whole file was read: its header is broken for certain.
          if (n == file->size()) problem = std::string(info.status().message());
        } else if (info->format == "gif") {
          if (gifs++ == 0) first_gif = path;
        } else if (absl::Status s = CheckImageEnd(*file, bytes); !s.ok()) {
          problem = absl::StrCat(path, ": ", s.message());
        }
        if (!problem.empty()) {
          if (o.strict) return absl::DataLossError(absl::StrCat(problem, " (--strict)"));
          ++skipped;
          warnings.push_back(absl::StrCat("skipped ", problem));
          continue;
        }
        list.Add(rel, static_cast<int64_t>(label));
      }
    }
    split_names.push_back(s.empty() ? "train" : s);
    list.Shrink();
    images.push_back(std::move(list));
  }
  if (gifs > 0) {
    warnings.push_back(absl::StrCat(
        gifs, " GIF image", gifs > 1 ? "s are" : " is", " stored as ", gifs > 1 ? "they are" : "it is",
        " (e.g. ", first_gif, "): the decode stage (decode=) reads JPEG and PNG only and "
        "--max-side does not re-encode GIFs; convert ", gifs > 1 ? "them" : "it",
        " to JPEG/PNG first, or read with skip_corrupt"));
  }
  size_t total = 0;
  for (const auto& l : images) total += l.size();
  if (total == 0) {
    return absl::InvalidArgumentError(absl::StrCat(o.input, ": no images found"));
  }
  return std::unique_ptr<Source>(new ImageFolderSource(
      std::move(split_names), std::move(images), std::move(classes), skipped, std::move(warnings),
      o.max_side, o.quality));
}

}  // namespace shardfeed
