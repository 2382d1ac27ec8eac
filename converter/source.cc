#include "converter/source.h"

#include "absl/strings/str_cat.h"

namespace shardfeed {

absl::StatusOr<std::unique_ptr<Source>> OpenSource(const std::string& type,
                                                   const SourceOptions& options) {
  if (type == "cifar10") return OpenCifarSource(false, options);
  if (type == "cifar100") return OpenCifarSource(true, options);
  if (type == "mnist") return OpenMnistSource(options);
  if (type == "image-folder") return OpenImageFolderSource(options);
  if (type == "files") return OpenFilesSource(options);
  if (type == "tfrecord") return OpenTfRecordSource(options);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown source type '", type,
      "' (expected cifar10, cifar100, mnist, image-folder, files or tfrecord)"));
}

FeatureSchema MakeFeature(const std::string& name, const std::string& kind, int64_t length,
                          const std::string& description, const std::string& dtype,
                          std::vector<int64_t> shape) {
  FeatureSchema f;
  f.set_name(name);
  f.set_kind(kind);
  f.set_length(length);
  f.set_description(description);
  f.set_dtype(dtype);
  for (int64_t d : shape) f.add_shape(d);
  return f;
}

}  // namespace shardfeed
