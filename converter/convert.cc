#include "converter/convert.h"
#include "record/json_text.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/version.h"
#include "converter/bucket_output.h"
#include "converter/convert_internal.h"
#include "converter/file_list.h"
#include "converter/leftovers.h"
#include "converter/ordered_pipeline.h"
#include "converter/output_dir.h"
#include "converter/shard_writer.h"
#include "converter/source.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/index.h"
#include "record/plural.h"
#include "record/record_format.h"
#include "record/record_writer.h"
#include "record/shard_name.h"
#include "record/storage.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

constexpr size_t kChunk = 128;  // records built per pipeline step

// A deterministic, seeded Fisher-Yates permutation (std::shuffle's algorithm
// is implementation-defined; ours must give the same order everywhere).
std::vector<uint64_t> Permutation(uint64_t n, uint64_t seed, bool shuffle) {
  std::vector<uint64_t> p(n);
  for (uint64_t i = 0; i < n; ++i) p[i] = i;
  if (!shuffle) return p;
  std::mt19937_64 rng(seed);
  for (uint64_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng() % i]);
  return p;
}

// Cancellation: the converting thread polls ConvertOptions::cancelled (at
// most every 10 ms: it may take a lock, e.g. Python's GIL); record builders
// on worker threads read the flag only.
class CancelPoll {
 public:
  explicit CancelPoll(const std::function<bool()>& cancelled) : cancelled_(cancelled) {}
  bool Poll() {
    if (seen()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(10)) return false;
    last_ = now;
    if (cancelled_()) flag_.store(true, std::memory_order_relaxed);
    return seen();
  }
  bool seen() const { return flag_.load(std::memory_order_relaxed); }

 private:
  const std::function<bool()>& cancelled_;
  std::chrono::steady_clock::time_point last_{};
  std::atomic<bool> flag_{false};
};

}  // namespace

std::string ManifestToJson(const Manifest& manifest) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(manifest, &json, options);
  return json;
}

absl::Status ValidateConvertOptions(const ConvertOptions& o) {
  if (o.output_dir.empty()) return absl::InvalidArgumentError("--output is required");
  if (o.input.empty()) return absl::InvalidArgumentError("--input is required");
  // A missing input is NOT_FOUND before anything else is said about it (a
  // glob matching nothing, a list file that is missing: the sources say so).
  if (o.input.find_first_of("*?[") == std::string::npos && o.input[0] != '@' &&
      !PathExists(o.input)) {
    return absl::NotFoundError(absl::StrCat("--input ", o.input, ": no such file or directory"));
  }
  if (o.num_shards < 0 || o.num_shards > kMaxNumShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-shards must be between 0 and ", kMaxNumShards));
  }
  if (o.num_shards == 0 && o.shard_size < kRecordOverhead) {
    return absl::InvalidArgumentError("--shard-size is too small");
  }
  if (o.num_shards == 0 && o.shard_size < kMinShardSize && !o.allow_small_shards) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shard-size ", o.shard_size, " bytes would write a file per few records; shards of "
        "~100 MB read best (below 100 kB: --allow-small-shards; Python: "
        "allow_small_shards=True)"));
  }
  if (o.compression == Compression::kAuto) {
    return absl::InvalidArgumentError("compression must be none, zlib or gzip");
  }
  if (o.task_count < 0 || (o.task_count > 0 && (o.task_index < 0 || o.task_index >= o.task_count))) {
    return absl::InvalidArgumentError(absl::StrCat("--task-index ", o.task_index,
                                                   " is not in [0, --task-count ", o.task_count,
                                                   ")"));
  }
  if (IsRemotePath(o.output_dir)) {
    if (o.task_count > 0) {
      return absl::UnimplementedError(absl::StrCat(
          "--output ", o.output_dir, ": conversion tasks write their parts to a shared folder; "
          "then `shardfeed merge DIR --output ", o.output_dir, "` uploads the dataset"));
    }
    if (o.type == "tfrecord") RETURN_IF_ERROR(RefuseBucketOutputInInput(o.input, o.output_dir));
  } else if (o.type == "image-folder") {
    RETURN_IF_ERROR(RefuseNestedFolders(o.input, o.output_dir,
                                        "image-folder reads every folder below --input"));
  }
  if (o.type == "tfrecord" && !IsRemotePath(o.output_dir)) {
    RETURN_IF_ERROR(RefuseOutputInInputFolder(o.input, o.output_dir));
  }
  if (o.max_side < 0 || (o.max_side > 0 && o.type != "image-folder") || o.quality < 1 ||
      o.quality > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-side ", o.max_side, " --quality ", o.quality,
        ": max-side must be >= 0 (image-folder only), quality 1..100"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SplitLayout> LayoutFor(const ConvertOptions& o, const Source& source) {
  SplitLayout l;
  l.names = source.splits();
  for (size_t s = 0; s < l.names.size(); ++s) {
    l.prefixes.push_back(o.prefix.empty()        ? l.names[s]
                         : l.names.size() == 1 ? o.prefix
                                               : absl::StrCat(o.prefix, "-", l.names[s]));
    l.total += source.num_samples(s);
  }
  if (l.total == 0) return absl::InvalidArgumentError(absl::StrCat(o.input, ": the input is empty"));
  return l;
}

std::vector<uint64_t> SplitOrder(const ConvertOptions& o, size_t split, uint64_t n) {
  return Permutation(n, o.seed + 0x9e3779b97f4a7c15ull * split, o.shuffle);
}

int ConvertThreads(const ConvertOptions& o) {
  return o.threads > 0 ? o.threads
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

absl::Status WriteRecords(const ConvertOptions& o, const Source& source, size_t split,
                          const std::vector<uint64_t>& order, uint64_t begin, uint64_t end,
                          ShardSequenceWriter* writer, ConvertProgress* progress) {
  const int threads = ConvertThreads(o);
  const size_t chunks = (end - begin + kChunk - 1) / kChunk;
  CancelPoll cancel(o.cancelled);
  return RunOrderedPipeline<std::vector<std::string>>(
      chunks, threads, 4 * static_cast<size_t>(threads),
      [&](size_t c) -> absl::StatusOr<std::vector<std::string>> {
        std::vector<std::string> records;
        for (uint64_t i = begin + c * kChunk; i < std::min<uint64_t>(end, begin + (c + 1) * kChunk);
             ++i) {
          if (cancel.seen()) return absl::CancelledError("interrupted");
          ASSIGN_OR_RETURN(std::string r, source.BuildRecord(split, order[i]));
          records.push_back(std::move(r));
        }
        return records;
      },
      [&](size_t, std::vector<std::string>& records) -> absl::Status {
        // Per record: a chunk of large records takes seconds to compress,
        // and Ctrl-C must stop within one record's time.
        for (const std::string& r : records) {
          if (cancel.Poll()) return absl::CancelledError("interrupted");
          RETURN_IF_ERROR(writer->Add(r));
          progress->bytes_written += r.size();
          ++progress->records_done;
          o.progress(*progress);
        }
        return absl::OkStatus();
      },
      [&cancel] { return cancel.Poll(); });
}

Manifest ManifestHeader(const ConvertOptions& o, const Source& source) {
  Manifest m;
  m.set_format_version(1);
  m.set_tool("shardfeed");
  m.set_tool_version(kVersion);
  m.set_source_type(o.type);
  m.set_source(o.input);
  ConvertSettings* settings = m.mutable_options();
  settings->set_shard_size(o.num_shards > 0 ? 0 : o.shard_size);
  settings->set_num_shards(o.num_shards);
  settings->set_shuffle(o.shuffle);
  settings->set_seed(o.seed);
  settings->set_compression(CompressionName(o.compression));
  settings->set_validation_from(o.validation_from);
  settings->set_strict(o.strict);
  settings->set_max_side(o.max_side);
  if (o.max_side > 0) settings->set_quality(o.quality);
  for (auto& f : source.schema()) *m.add_features() = f;
  for (auto& c : source.class_names()) m.add_class_names(c);
  for (auto& c : source.coarse_class_names()) m.add_coarse_class_names(c);
  m.set_skipped_inputs(source.skipped_inputs());
  return m;
}

void AddSplits(const SplitLayout& layout, const Source& source, Manifest* m,
               const std::vector<int64_t>& shards_per_split) {
  for (size_t s = 0; s < layout.names.size(); ++s) {
    SplitInfo* info = m->add_splits();
    info->set_name(layout.names[s]);
    info->set_records(static_cast<int64_t>(source.num_samples(s)));
    info->set_shards(shards_per_split[s]);
  }
}

absl::StatusOr<ConvertSummary> Convert(const ConvertOptions& given) {
  const auto start = std::chrono::steady_clock::now();
  // Folders as typed ("out/"), without the trailing slash that would double
  // in every path joined to them.
  ConvertOptions o = given;
  o.input = StripTrailingSlashes(o.input);
  o.output_dir = StripTrailingSlashes(o.output_dir);
  RETURN_IF_ERROR(ValidateConvertOptions(o));
  SourceOptions so;
  so.input = o.input;
  so.validation_from = o.validation_from;
  so.strict = o.strict;
  so.max_side = o.max_side;
  so.quality = o.quality;
  ASSIGN_OR_RETURN(std::unique_ptr<Source> source, OpenSource(o.type, so));
  ASSIGN_OR_RETURN(const SplitLayout layout, LayoutFor(o, *source));
  if (o.task_count > 0) {
    ASSIGN_OR_RETURN(ConvertSummary summary, ConvertTask(o, *source, layout));
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary;
  }

  // A bucket output: checked now, written into a local staging folder,
  // uploaded at the end (converter/bucket_output.h).
  std::optional<BucketOutput> bucket;
  std::optional<StagingFolder> staging;
  if (IsRemotePath(o.output_dir)) {
    ASSIGN_OR_RETURN(bucket, BucketOutput::Prepare(o.output_dir, layout.prefixes, o.overwrite));
    ASSIGN_OR_RETURN(staging, StagingFolder::Create());
    o.output_dir = staging->path();
  }
  ASSIGN_OR_RETURN(std::vector<std::string> previous,
                   PreviousDatasetToReplace(o.output_dir, layout.prefixes, o.overwrite));
  // A folder this run creates is removed again if the run fails (rmdir: only
  // when empty, so nothing but our own removed temporaries can go with it).
  struct RemoveIfCreatedAndEmpty {
    std::string dir;
    bool armed;
    ~RemoveIfCreatedAndEmpty() {
      if (armed) ::rmdir(dir.c_str());
    }
  } created{o.output_dir, !PathExists(o.output_dir)};
  RETURN_IF_ERROR(MakeDirs(o.output_dir));
  ASSIGN_OR_RETURN(std::vector<std::string> leftovers,
                   RemoveConvertLeftovers(o.output_dir, layout.prefixes));

  // On any failure, the temporaries written so far are removed (before the
  // folder, declared above).
  PendingShards shards;
  ConvertProgress progress;
  progress.records_total = layout.total;
  std::vector<int64_t> shards_per_split;
  for (size_t s = 0; s < layout.names.size(); ++s) {
    const uint64_t n = source->num_samples(s);
    progress.split = layout.names[s];
    ShardSequenceWriter writer({o.output_dir, layout.prefixes[s], layout.names[s], o.compression,
                                o.compression_level},
                               ShardBoundaryRule(o.shard_size, o.num_shards, n), &shards);
    const size_t before = shards.shards().size();
    RETURN_IF_ERROR(WriteRecords(o, *source, s, SplitOrder(o, s, n), 0, n, &writer, &progress));
    RETURN_IF_ERROR(writer.Finish());
    shards_per_split.push_back(static_cast<int64_t>(shards.shards().size() - before));
  }

  // Every shard is complete: give them their final names (index first), then
  // (last) write the manifest.
  Manifest m = ManifestHeader(o, *source);
  RETURN_IF_ERROR(shards.Finalize(o.output_dir, o.compression, &m));
  AddSplits(layout, *source, &m, shards_per_split);
  std::set<std::string> final_names;
  for (const ShardInfo& sh : m.shards()) {
    final_names.insert(sh.file());
    final_names.insert(sh.index_file());
  }
  // With --overwrite: files of the previous dataset that this run did not
  // replace would be mistaken for part of the new one.
  for (const std::string& f : previous) {
    if (f != "manifest.json" && !final_names.count(f)) {
      ::unlink(absl::StrCat(o.output_dir, "/", f).c_str());
    }
  }
  if (bucket.has_value()) {
    RETURN_IF_ERROR(bucket->Publish(DatasetFiles(o.output_dir, m), ManifestToJson(m),
                                    o.uploaded, o.cancelled));
  } else {
    RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(o.output_dir, "/manifest.json"),
                                        ManifestToJson(m)));
  }
  created.armed = false;
  ConvertSummary summary;
  summary.manifest = std::move(m);
  summary.warnings = source->warnings();
  for (size_t s = 0; s < layout.names.size(); ++s) {
    const uint64_t n = source->num_samples(s);
    if (o.num_shards > 0 && n > 0 && static_cast<uint64_t>(o.num_shards) > n) {
      summary.warnings.push_back(absl::StrCat("split '", layout.names[s], "' has ",
                                              Plural(static_cast<int64_t>(n), "record"), ": wrote ",
                                              Plural(static_cast<int64_t>(n), "shard"),
                                              " (one record each), not --num-shards ",
                                              o.num_shards));
    }
  }
  if (!leftovers.empty()) {
    summary.warnings.push_back(absl::StrCat(
        "removed ", leftovers.size(), " temporary file(s) an interrupted run left in ",
        o.output_dir, ": ", absl::StrJoin(leftovers, ", ")));
  }
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::string SummaryToJson(const ConvertSummary& s) {
  const Manifest& m = s.manifest;
  std::string shards, warnings;
  for (const auto& sh : m.shards()) {
    absl::StrAppend(&shards, shards.empty() ? "" : ",",
                    absl::StrFormat(R"({"file":%s,"split":%s,"records":%d,"bytes":%d})",
                                    JsonQuoted(sh.file()), JsonQuoted(sh.split()), sh.records(),
                                    sh.bytes()));
  }
  for (const std::string& w : s.warnings) {
    absl::StrAppend(&warnings, warnings.empty() ? "" : ",", JsonQuoted(w));
  }
  return absl::StrFormat(
      R"({"ok":true,"records":%d,"bytes":%d,"shards":%d,"skipped_inputs":%d,"seconds":%.3f,"mb_per_s":%.1f,"shard_files":[%s],"warnings":[%s]})",
      m.total_records(), m.total_bytes(), m.shards_size(), m.skipped_inputs(), s.seconds,
      m.total_bytes() / 1e6 / std::max(s.seconds, 1e-9), shards, warnings);
}


}  // namespace shardfeed
