// Convert: packs a Source into pre-shuffled TFRecord shards of ~100 MB, with
// an index per shard and manifest.json per dataset.
//
// Guarantees:
//  - Deterministic: the same input and options give byte-identical shards,
//    indexes and manifest, whatever the thread count (records are built in
//    parallel but written in a fixed order; shard boundaries depend only on
//    record sizes).
//  - Safe: shards are written under hidden temporary names and renamed when
//    every shard of every split is complete; the manifest is written last; on
//    any error or cancellation the temporaries are removed. Existing output is
//    never replaced without `overwrite`, and then only a dataset shardfeed
//    wrote (converter/output_dir.h); temporaries that a killed run left are
//    removed (converter/leftovers.h) and reported in the summary's warnings.
//  - Buckets: an s3:// or gs:// output_dir is written into a local staging
//    folder (under $TMPDIR, removed afterwards), then uploaded, shards and
//    indexes first, the manifest last (converter/bucket_output.h); existing
//    datasets there are refused or replaced as local ones are.
//  - Bounded memory: a window of record chunks is in flight, not the dataset
//    (CIFAR and MNIST sources hold their batches, ~180 MB at most).
#ifndef SHARDFEED_CONVERTER_CONVERT_H_
#define SHARDFEED_CONVERTER_CONVERT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/manifest.pb.h"
#include "record/compression.h"

namespace shardfeed {

struct ConvertProgress {
  std::string split;
  uint64_t records_done = 0;   // in this run, all splits
  uint64_t records_total = 0;  // all splits
  uint64_t bytes_written = 0;  // uncompressed record bytes
};

// A shard smaller than this is almost certainly a mistake (--shard-size 16
// wrote a file per record); ConvertOptions::allow_small_shards forces it.
inline constexpr uint64_t kMinShardSize = 100'000;
// Five digits in PREFIX-NNNNN-of-NNNNN.
inline constexpr int64_t kMaxNumShards = 99'999;

struct ConvertOptions {
  std::string type;    // cifar10, cifar100, mnist, image-folder, files
  std::string input;   // folder, .tar.gz, glob or @list
  std::string output_dir;
  // Shard file prefix. Default "": the split name ("train-00000-of-00003");
  // with a prefix and several splits: "PREFIX-train-...".
  std::string prefix;
  // Target shard size in bytes (a shard exceeds it only by its last record);
  // measured on uncompressed records. Default: 100 MB.
  uint64_t shard_size = 100'000'000;
  // Below kMinShardSize, shard_size is refused unless this is set.
  bool allow_small_shards = false;
  // If > 0: this many shards per split (records split evenly), overriding
  // shard_size; a split with fewer records gets one shard per record (and a
  // warning in the summary). At most kMaxNumShards.
  int64_t num_shards = 0;
  bool shuffle = true;
  uint64_t seed = 0;
  Compression compression = Compression::kNone;
  int compression_level = -1;
  int threads = 0;  // 0: one per core
  bool overwrite = false;
  bool strict = false;
  std::string validation_from;  // CIFAR: e.g. "data_batch_5"
  // Conversion as independent tasks (Slurm array, Kubernetes Indexed Job):
  // with task_count > 0, this run writes only task `task_index`'s share of
  // the shards the single-process run would write (same listing, shuffle,
  // boundaries and names) into OUTPUT/_parts/ (see converter/task_part.h);
  // `shardfeed merge OUTPUT` then verifies the parts and writes the manifest.
  int task_index = 0;
  int task_count = 0;
  // image-folder: images whose longer side exceeds max_side (> 0) are
  // re-encoded as JPEG of `quality` with that side resized to max_side
  // (reader/decode/jpeg_encoder.h); recorded in the manifest.
  int max_side = 0;
  int quality = 90;
  // Polled while converting (between records) and uploading (between
  // parts); returning true cancels (CANCELLED) within about one record's
  // (one part's) time.
  std::function<bool()> cancelled = [] { return false; };
  // Called on the converting thread after each record written.
  std::function<void(const ConvertProgress&)> progress = [](const ConvertProgress&) {};
  // With an s3:// or gs:// output_dir (staged locally, then uploaded, the
  // manifest last: converter/bucket_output.h): called after each file is
  // uploaded, with its size, from upload threads. May be empty.
  std::function<void(uint64_t bytes)> uploaded;
};

struct ConvertSummary {
  Manifest manifest;
  std::vector<std::string> warnings;
  double seconds = 0;
};

absl::StatusOr<ConvertSummary> Convert(const ConvertOptions& options);

// The summary `shardfeed convert --json` prints (and shardfeed.convert()
// returns in Python): records, bytes, shards, skipped inputs, seconds, MB/s
// and the shard files.
std::string SummaryToJson(const ConvertSummary& summary);

// The manifest as written to manifest.json.
std::string ManifestToJson(const Manifest& manifest);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_CONVERT_H_
