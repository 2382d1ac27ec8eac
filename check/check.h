// Check: verifies shards, their index files and the dataset manifest, and
// optionally salvages the good records of damaged shards.
//
// Per shard: framing and both CRCs of every record, a clean end (a truncated
// tail is a problem, not the end of data), decompression errors, that every
// record is an Example (or SequenceExample) matching the dataset's schema
// (unless raw), and the .index file. The schema is the manifest's when the
// shard's manifest is known (given, or beside a shard given by path);
// otherwise it is inferred from ALL records of the shards without one
// (reader/schema_inference.h: a missing feature is optional, a varying
// count is variable-length; only a kind that differs between records is a
// problem). Per dataset (a manifest.json or a folder holding one): every
// listed shard present with its record count, size and checksum, and no
// unlisted shards. A zero-byte shard is empty: a note, or a problem when its
// manifest lists records for it. Shards are checked in parallel.
//
// Problems are data, not errors: Check() fails only for usage or I/O errors
// (a path that does not exist). Nothing is ever modified in place.
#ifndef SHARDFEED_CHECK_CHECK_H_
#define SHARDFEED_CHECK_CHECK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

struct CheckOptions {
  bool raw = false;      // do not parse records as Examples (nor decode media)
  // Encoded images and WAV audio (check/media_check.h): -1 the default (a
  // whole decode of every image of a dataset made by `convert image-folder`,
  // header checks elsewhere), 0 header checks only, 1 a whole decode.
  int decode = -1;
  int threads = 0;       // 0: one per core
  // Report at most this many schema problems per shard (then a count).
  int max_problems_per_shard = 20;
  // If set: write the good records of every damaged shard to this folder,
  // under the same names, with index files.
  std::string salvage_dir;
  bool overwrite = false;  // for salvage output
  std::function<void(uint64_t bytes_done, uint64_t bytes_total)> progress =
      [](uint64_t, uint64_t) {};
};

struct CheckProblem {
  std::string file;
  int64_t offset = -1;  // -1: the problem is about the file as a whole
  std::string what;
  // The file the record was converted from (its image/filename or filename
  // feature), when the problem is about one record's value and it has one.
  std::string source;
};

struct SalvageResult {
  std::string output;       // the salvaged shard
  int64_t records_kept = 0;
  int64_t records_dropped = -1;  // -1 when unknown (no index or manifest count)
  int64_t regions_dropped = 0;
  std::vector<std::pair<uint64_t, uint64_t>> dropped_ranges;  // [begin, end)
};

struct ShardResult {
  std::string path;
  int64_t records = 0;
  uint64_t bytes = 0;  // on disk
  bool damaged = false;  // framing, CRC or compression problems
  bool empty = false;    // zero bytes
  bool salvaged = false;
  SalvageResult salvage;
};

// The schema the records were checked against.
struct SchemaReport {
  // A manifest's path, or "inferred from N records in M shards".
  std::string source;
  bool inferred = false;
  std::vector<FeatureSchema> features;
  // SequenceExample feature_lists keys seen (their values are not checked).
  std::vector<std::string> feature_lists;
};

struct CheckReport {
  std::vector<ShardResult> shards;
  std::vector<CheckProblem> problems;  // sorted by file, then offset
  // Worth saying, not a problem (an empty shard no manifest expects records in).
  std::vector<CheckProblem> notes;
  std::vector<SchemaReport> schemas;   // unless raw
  int64_t records = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  std::string manifest;  // path, if one was checked
  // Temporary files that interrupted shardfeed runs left beside the checked
  // shards (converter/leftovers.h): not part of the dataset, not problems.
  std::vector<std::string> leftovers;
  // With --salvage: the manifest written for the salvaged shards of a
  // dataset (check/salvage_manifest.h), "" when none was.
  std::string salvage_manifest;
};

absl::StatusOr<CheckReport> Check(const std::vector<std::string>& paths,
                                  const CheckOptions& options);

// "FILE:OFFSET: what" (or "FILE: what"), then " (source file: S)" when the
// problem has a source.
std::string FormatProblem(const CheckProblem& p);
// The report as one JSON document: ok, counts, problems, notes, schemas,
// shard_results.
std::string ReportToJson(const CheckReport& report);

}  // namespace shardfeed

#endif  // SHARDFEED_CHECK_CHECK_H_
