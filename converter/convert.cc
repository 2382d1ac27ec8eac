#include "converter/convert.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include <google/protobuf/util/json_util.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/version.h"
#include "converter/file_list.h"
#include "converter/leftovers.h"
#include "converter/ordered_pipeline.h"
#include "converter/output_dir.h"
#include "converter/source.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/index.h"
#include "record/record_format.h"
#include "record/record_writer.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

constexpr size_t kChunk = 128;  // records built per task

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

std::string Extension(Compression c) {
  if (c == Compression::kGzip) return ".tfrecord.gz";
  if (c == Compression::kZlib) return ".tfrecord.zlib";
  return ".tfrecord";
}

absl::Status MakeDirs(const std::string& dir) {
  std::string partial;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      partial = dir.substr(0, i);
      if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
        return IoError("cannot create directory", partial, errno);
      }
    }
  }
  return absl::OkStatus();
}

struct PendingShard {
  std::string partial_path;  // hidden temporary, complete
  std::string split_prefix;
  std::vector<IndexEntry> index;
  ShardInfo info;
};

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

// --num-shards for a split of `records`: never an empty shard.
uint64_t ShardsWanted(const ConvertOptions& o, uint64_t records) {
  return std::min<uint64_t>(static_cast<uint64_t>(o.num_shards), records);
}

// Writes one split's shards under temporary names.
class SplitWriter {
 public:
  SplitWriter(const ConvertOptions& o, std::string dir, std::string split, std::string prefix,
              uint64_t records, std::vector<PendingShard>* done)
      : o_(o), dir_(std::move(dir)), split_(std::move(split)), prefix_(std::move(prefix)),
        records_(records), done_(done) {}

  // `record` is framed (header, data, footer). Errors name the user's folder
  // and the shard, not the hidden temporary.
  absl::Status Add(absl::string_view record) { return InUserTerms(AddRecord(record)); }
  absl::Status Finish() {
    if (writer_ != nullptr) return InUserTerms(CloseShard());
    return absl::OkStatus();
  }

 private:
  absl::Status InUserTerms(const absl::Status& s) const {
    if (s.ok() || partial_.empty()) return s;
    return absl::Status(s.code(), ReplaceTemporaryPath(std::string(s.message()), partial_, shown_));
  }

  absl::Status AddRecord(absl::string_view record) {
    bool boundary;
    if (o_.num_shards > 0) {
      boundary = written_ == next_boundary_ && written_ < records_;
    } else {
      boundary = writer_ == nullptr ||
                 (writer_->offset() > 0 &&
                  writer_->offset() + record.size() > o_.shard_size);
    }
    if (boundary) RETURN_IF_ERROR(StartShard());
    RETURN_IF_ERROR(writer_->WriteFramedRecord(record));
    ++written_;
    return absl::OkStatus();
  }

  absl::Status StartShard() {
    if (writer_ != nullptr) RETURN_IF_ERROR(CloseShard());
    int64_t k = shard_count_++;
    if (o_.num_shards > 0) next_boundary_ = (k + 1) * records_ / ShardsWanted(o_, records_);
    RecordWriterOptions wo;
    wo.compression = o_.compression;
    wo.compression_level = o_.compression_level;
    wo.overwrite = true;  // our own hidden temporary
    partial_ = PartialShardPath(dir_, prefix_, k);
    shown_ = absl::StrFormat("%s (shard %s-%05d)", dir_, prefix_, k);
    ASSIGN_OR_RETURN(writer_, RecordWriter::Create(partial_, wo));
    return absl::OkStatus();
  }

  absl::Status CloseShard() {
    PendingShard s;
    s.partial_path = writer_->path();
    s.split_prefix = prefix_;
    s.index = writer_->index();
    RETURN_IF_ERROR(writer_->Close());
    s.info.set_split(split_);
    s.info.set_records(static_cast<int64_t>(s.index.size()));
    s.info.set_bytes(static_cast<int64_t>(writer_->file_bytes()));
    s.info.set_crc32c(absl::StrFormat("%08x", writer_->file_crc32c()));
    done_->push_back(std::move(s));
    writer_.reset();
    return absl::OkStatus();
  }

  const ConvertOptions& o_;
  std::string dir_, split_, prefix_;
  std::string partial_, shown_;  // the shard being written, as hidden and as shown
  uint64_t records_;
  std::vector<PendingShard>* done_;
  std::unique_ptr<RecordWriter> writer_;
  int64_t shard_count_ = 0;
  uint64_t written_ = 0;
  uint64_t next_boundary_ = 0;
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

absl::StatusOr<Manifest> ManifestFromJson(absl::string_view json) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  Manifest m;
  auto parsed = google::protobuf::util::JsonStringToMessage(std::string(json), &m, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid manifest: ", parsed.ToString()));
  }
  return m;
}

absl::StatusOr<ConvertSummary> Convert(const ConvertOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.output_dir.empty()) return absl::InvalidArgumentError("--output is required");
  if (o.input.empty()) return absl::InvalidArgumentError("--input is required");
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
        "~100 MB read best (use --allow-small-shards below 100 kB)"));
  }
  if (o.compression == Compression::kAuto) {
    return absl::InvalidArgumentError("compression must be none, zlib or gzip");
  }
  if (o.type == "image-folder") {
    RETURN_IF_ERROR(RefuseNestedFolders(o.input, o.output_dir,
                                        "image-folder reads every folder below --input"));
  }
  SourceOptions so;
  so.input = o.input;
  so.validation_from = o.validation_from;
  so.strict = o.strict;
  ASSIGN_OR_RETURN(std::unique_ptr<Source> source, OpenSource(o.type, so));

  const std::vector<std::string> splits = source->splits();
  std::vector<std::string> prefixes;
  uint64_t total = 0;
  for (size_t s = 0; s < splits.size(); ++s) {
    std::string p = o.prefix.empty() ? splits[s]
                    : splits.size() == 1 ? o.prefix
                                         : absl::StrCat(o.prefix, "-", splits[s]);
    prefixes.push_back(p);
    total += source->num_samples(s);
  }
  if (total == 0) return absl::InvalidArgumentError(absl::StrCat(o.input, ": the input is empty"));

  ASSIGN_OR_RETURN(std::vector<std::string> previous,
                   PreviousDatasetToReplace(o.output_dir, prefixes, o.overwrite));
  RETURN_IF_ERROR(MakeDirs(o.output_dir));
  ASSIGN_OR_RETURN(std::vector<std::string> leftovers,
                   RemoveConvertLeftovers(o.output_dir, prefixes));

  std::vector<PendingShard> shards;
  // On any failure, remove every temporary shard written so far.
  absl::Cleanup remove_partials = [&shards] {
    for (const auto& s : shards) ::unlink(s.partial_path.c_str());
  };

  const int threads =
      o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  ConvertProgress progress;
  progress.records_total = total;
  CancelPoll cancel(o.cancelled);
  for (size_t s = 0; s < splits.size(); ++s) {
    const uint64_t n = source->num_samples(s);
    if (n == 0) continue;
    progress.split = splits[s];
    const std::vector<uint64_t> order =
        Permutation(n, o.seed + 0x9e3779b97f4a7c15ull * s, o.shuffle);
    SplitWriter writer(o, o.output_dir, splits[s], prefixes[s], n, &shards);
    const size_t chunks = (n + kChunk - 1) / kChunk;
    RETURN_IF_ERROR(RunOrderedPipeline<std::vector<std::string>>(
        chunks, threads, 4 * static_cast<size_t>(threads),
        [&](size_t c) -> absl::StatusOr<std::vector<std::string>> {
          std::vector<std::string> records;
          for (size_t i = c * kChunk; i < std::min<uint64_t>(n, (c + 1) * kChunk); ++i) {
            if (cancel.seen()) return absl::CancelledError("interrupted");
            ASSIGN_OR_RETURN(std::string r, source->BuildRecord(s, order[i]));
            records.push_back(std::move(r));
          }
          return records;
        },
        [&](size_t, std::vector<std::string>& records) -> absl::Status {
          // Per record: a chunk of large records takes seconds to compress,
          // and Ctrl-C must stop within one record's time.
          for (const std::string& r : records) {
            if (cancel.Poll()) return absl::CancelledError("interrupted");
            RETURN_IF_ERROR(writer.Add(r));
            progress.bytes_written += r.size();
            ++progress.records_done;
            o.progress(progress);
          }
          return absl::OkStatus();
        },
        [&cancel] { return cancel.Poll(); }));
    RETURN_IF_ERROR(writer.Finish());
  }

  // Every shard is complete: give them their final names, then the indexes,
  // then (last) the manifest.
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
  for (auto& f : source->schema()) *m.add_features() = f;
  for (auto& c : source->class_names()) m.add_class_names(c);
  for (auto& c : source->coarse_class_names()) m.add_coarse_class_names(c);
  m.set_skipped_inputs(source->skipped_inputs());

  std::map<std::string, int64_t> shards_per_prefix;
  for (const auto& sh : shards) ++shards_per_prefix[sh.split_prefix];
  std::map<std::string, int64_t> seen;
  std::set<std::string> final_names;
  for (auto& sh : shards) {
    int64_t k = seen[sh.split_prefix]++;
    std::string name = absl::StrFormat("%s-%05d-of-%05d%s", sh.split_prefix, k,
                                       shards_per_prefix[sh.split_prefix], Extension(o.compression));
    std::string final_path = absl::StrCat(o.output_dir, "/", name);
    RETURN_IF_ERROR(WriteIndexFile(IndexPathFor(final_path), sh.index));
    if (::rename(sh.partial_path.c_str(), final_path.c_str()) != 0) {
      return IoError("cannot rename the finished shard", final_path, errno);
    }
    sh.partial_path.clear();
    sh.info.set_file(name);
    sh.info.set_index_file(name + ".index");
    final_names.insert(name);
    final_names.insert(name + ".index");
    *m.add_shards() = sh.info;
    m.set_total_records(m.total_records() + sh.info.records());
    m.set_total_bytes(m.total_bytes() + sh.info.bytes());
  }
  for (size_t s = 0; s < splits.size(); ++s) {
    SplitInfo* info = m.add_splits();
    info->set_name(splits[s]);
    info->set_records(static_cast<int64_t>(source->num_samples(s)));
    info->set_shards(shards_per_prefix[prefixes[s]]);
  }
  // With --overwrite: files of the previous dataset that this run did not
  // replace would be mistaken for part of the new one.
  for (const std::string& f : previous) {
    if (f != "manifest.json" && !final_names.count(f)) {
      ::unlink(absl::StrCat(o.output_dir, "/", f).c_str());
    }
  }
  RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(o.output_dir, "/manifest.json"),
                                      ManifestToJson(m)));
  ConvertSummary summary;
  summary.manifest = std::move(m);
  summary.warnings = source->warnings();
  for (size_t s = 0; s < splits.size(); ++s) {
    const uint64_t n = source->num_samples(s);
    if (o.num_shards > 0 && n > 0 && static_cast<uint64_t>(o.num_shards) > n) {
      summary.warnings.push_back(absl::StrCat("split '", splits[s], "' has ", n,
                                              " records: wrote ", n, " shards (one record each), "
                                              "not --num-shards ", o.num_shards));
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
  std::string shards;
  for (const auto& sh : m.shards()) {
    absl::StrAppend(&shards, shards.empty() ? "" : ",",
                    absl::StrFormat(R"({"file":"%s","split":"%s","records":%d,"bytes":%d})",
                                    sh.file(), sh.split(), sh.records(), sh.bytes()));
  }
  return absl::StrFormat(
      R"({"ok":true,"records":%d,"bytes":%d,"shards":%d,"skipped_inputs":%d,"seconds":%.3f,"mb_per_s":%.1f,"shard_files":[%s]})",
      m.total_records(), m.total_bytes(), m.shards_size(), m.skipped_inputs(), s.seconds,
      m.total_bytes() / 1e6 / std::max(s.seconds, 1e-9), shards);
}


}  // namespace shardfeed
