// Source: a dataset to convert, as numbered samples per split. Each source
// type (CIFAR, MNIST, image folders, file lists) implements it.
//
// Threading: after Open, BuildRecord() may be called from many threads at
// once; everything else from one thread.
#ifndef SHARDFEED_CONVERTER_SOURCE_H_
#define SHARDFEED_CONVERTER_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

struct SourceOptions {
  std::string input;            // folder, archive, glob or list file
  std::string validation_from;  // CIFAR: a train batch to split off
  bool strict = false;          // image-folder: a non-image is an error
  int max_side = 0;             // image-folder: re-encode larger images (0: off)
  int quality = 90;             // image-folder: JPEG quality of re-encoded images
};

class Source {
 public:
  virtual ~Source() = default;

  // Split names in output order, e.g. {"train", "test"}.
  virtual std::vector<std::string> splits() const = 0;
  virtual size_t num_samples(size_t split) const = 0;
  // The serialized Example for sample `index` of `split`, framed as a whole
  // TFRecord record (ExampleEncoder::FinishFramed), so that the CRCs are
  // computed on the worker threads. Errors name the input file (and offset
  // where one applies).
  virtual absl::StatusOr<std::string> BuildRecord(size_t split, size_t index) const = 0;

  // The exact size of BuildRecord(split, index) (framed), for conversion
  // tasks, which plan every shard boundary without writing the records.
  // Default: builds the record. Sources whose records are costly to build
  // (file reads) compute it from what the listing knows. Thread-safe.
  virtual absl::StatusOr<uint64_t> RecordSize(size_t split, size_t index) const {
    absl::StatusOr<std::string> r = BuildRecord(split, index);
    if (!r.ok()) return r.status();
    return r->size();
  }

  // For the manifest.
  virtual std::vector<FeatureSchema> schema() const = 0;
  virtual std::vector<std::string> class_names() const { return {}; }
  virtual std::vector<std::string> coarse_class_names() const { return {}; }
  virtual int64_t skipped_inputs() const { return 0; }
  // Warnings to show the user (e.g. skipped files).
  virtual std::vector<std::string> warnings() const { return {}; }
};

// The source types `shardfeed convert` knows.
inline constexpr const char* kSourceTypes[] = {"cifar10", "cifar100", "mnist", "image-folder",
                                               "files", "tfrecord"};

absl::StatusOr<std::unique_ptr<Source>> OpenCifarSource(bool cifar100, const SourceOptions& o);
absl::StatusOr<std::unique_ptr<Source>> OpenMnistSource(const SourceOptions& o);
absl::StatusOr<std::unique_ptr<Source>> OpenImageFolderSource(const SourceOptions& o);
absl::StatusOr<std::unique_ptr<Source>> OpenFilesSource(const SourceOptions& o);
absl::StatusOr<std::unique_ptr<Source>> OpenTfRecordSource(const SourceOptions& o);

// Dispatches on `type` (one of kSourceTypes).
absl::StatusOr<std::unique_ptr<Source>> OpenSource(const std::string& type,
                                                   const SourceOptions& options);

// Helpers for sources.
FeatureSchema MakeFeature(const std::string& name, const std::string& kind, int64_t length,
                          const std::string& description, const std::string& dtype = "",
                          std::vector<int64_t> shape = {});

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_SOURCE_H_
