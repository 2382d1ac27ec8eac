#include "check/check.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "check/check_inputs.h"
#include "check/media_check.h"
#include "check/salvage_guard.h"
#include "check/salvage_manifest.h"
#include "check/schema.h"
#include "converter/leftovers.h"
#include "converter/tfrecord_scan.h"
#include "reader/schema_inference.h"
#include "record/crc32c.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/index.h"
#include "record/plural.h"
#include "record/input_stream.h"
#include "record/record_format.h"
#include "record/record_reader.h"
#include "record/record_scanner.h"
#include "record/record_writer.h"
#include "record/shard_name.h"
#include "record/status_macros.h"
#include "record/storage.h"

namespace shardfeed {
namespace {

std::string Basename(const std::string& p) { return std::string(BaseName(p)); }

bool IsDirectory(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The whole decompressed stream (or the prefix before a decompression error,
// which is returned in *stream_error).
absl::StatusOr<std::string> LoadStream(const std::string& path, Compression compression,
                                       absl::Status* stream_error) {
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessSource> file, OpenSource(path));
  auto in = MakeInputStream(std::move(file), compression);
  std::string out;
  std::string buf(1 << 20, '\0');
  for (;;) {
    auto n = in->Read(buf.data(), buf.size());
    if (!n.ok()) {
      *stream_error = n.status();
      break;
    }
    if (*n == 0) break;
    out.append(buf.data(), *n);
  }
  return out;
}

// "path:123: what" → what (the reader's messages carry the location).
std::string StripLocation(const std::string& message, const std::string& path) {
  if (absl::StartsWith(message, path + ":")) {
    size_t colon = message.find(": ", path.size() + 1);
    if (colon != std::string::npos) return message.substr(colon + 2);
  }
  return message;
}

class ShardChecker {
 public:
  // `schema`: the manifest's; nullptr: infer it (see inference()).
  ShardChecker(const std::string& path, const Schema* schema, const ShardInfo* listed,
               const MediaSchema* media, bool require_index, const CheckOptions& o)
      : path_(path), schema_(schema), listed_(listed), media_schema_(media),
        require_index_(require_index), o_(o),
        media_(path, media, o.max_problems_per_shard) {
    result_.path = path;
  }

  absl::Status Run() {
    ASSIGN_OR_RETURN(auto reader, RecordReader::Open(path_));
    result_.bytes = reader->file_size();
    compression_ = reader->compression();
    // The manifest's whole-file checksum of an uncompressed shard, folded in
    // while reading: header and footer bytes are re-encoded from the values
    // just verified, and the data's CRC (verified) is combined in, so the
    // bytes are read and checksummed once.
    fold_file_crc_ = listed_ != nullptr && !listed_->crc32c().empty() &&
                     compression_ == Compression::kNone;
    absl::string_view record;
    for (;;) {
      absl::Status s = reader->ReadRecord(&record);
      if (absl::IsOutOfRange(s)) break;
      if (absl::IsDataLoss(s)) {
        result_.damaged = true;
        break;
      }
      RETURN_IF_ERROR(s);
      if (fold_file_crc_) FoldIntoFileCrc(record.size(), reader->last_stored_data_crc());
      entries_.push_back({reader->last_record_offset(), reader->offset() - reader->last_record_offset()});
      CheckSchema(record, reader->last_record_offset());
      if (progress_ && reader->file_position() >= progress_at_) {
        progress_at_ = reader->file_position() + (4 << 20);
        progress_(reader->file_position());
      }
    }
    if (result_.damaged) RETURN_IF_ERROR(Rescan());
    for (auto& p : media_.problems()) problems_.push_back(std::move(p));
    result_.records = static_cast<int64_t>(entries_.size());
    if (result_.bytes == 0) return CheckEmpty();
    CheckIndex();
    RETURN_IF_ERROR(CheckListed());
    return absl::OkStatus();
  }

  ShardResult& result() { return result_; }
  std::vector<CheckProblem>& problems() { return problems_; }
  // Called while reading with the bytes of the file read so far (every few
  // MB), so progress advances within one large (e.g. gzip) shard.
  void set_progress(std::function<void(uint64_t)> progress) { progress_ = std::move(progress); }
  std::vector<CheckProblem>& notes() { return notes_; }
  // The records' features, when checked without a manifest's schema.
  const SchemaInference& inference() const { return inference_; }
  MediaChecker& media() { return media_; }
  void set_salvage_guard(const SalvageGuard* guard) { guard_ = guard; }

 private:
  void Add(int64_t offset, std::string what) { problems_.push_back({path_, offset, std::move(what)}); }

  void FoldIntoFileCrc(uint64_t length, uint32_t data_crc) {
    char header[kRecordHeaderSize];
    EncodeFixed64(header, length);
    EncodeFixed32(header + 8, crc32c::Mask(crc32c::Value(header, 8)));
    char footer[kRecordFooterSize];
    EncodeFixed32(footer, crc32c::Mask(data_crc));
    file_crc_ = crc32c::Extend(file_crc_, header, sizeof(header));
    file_crc_ = crc32c::Combine(file_crc_, data_crc, length);
    file_crc_ = crc32c::Extend(file_crc_, footer, sizeof(footer));
  }

  void CheckSchema(absl::string_view record, uint64_t offset) {
    if (o_.raw) return;
    media_.Add(record, static_cast<int64_t>(offset));
    std::string problem;
    if (schema_ != nullptr) {
      problem = SchemaProblem(record, *schema_);
    } else if (absl::Status s = inference_.Add(record, static_cast<int64_t>(offset)); !s.ok()) {
      problem = absl::StrCat("not an Example: ", s.message());
    }
    if (problem.empty()) return;
    if (schema_problems_++ < o_.max_problems_per_shard) {
      Add(static_cast<int64_t>(offset), problem);
    } else if (schema_problems_ == o_.max_problems_per_shard + 1) {
      Add(-1, "more schema problems in this shard are not listed");
    }
  }

  // The shard is damaged: walk the whole stream with the resynchronizing
  // scanner, reporting every damaged region, and salvage if asked.
  absl::Status Rescan() {
    absl::Status stream_error;
    ASSIGN_OR_RETURN(std::string data, LoadStream(path_, compression_, &stream_error));
    entries_.clear();
    schema_problems_ = 0;
    inference_ = SchemaInference();
    media_ = MediaChecker(path_, media_schema_, o_.max_problems_per_shard);
    std::vector<std::pair<uint64_t, uint64_t>> dropped;
    std::vector<std::string> good;
    RecordScanner scanner(data);
    ScannedRecord r;
    SkippedRegion skip;
    bool had_skip;
    for (;;) {
      bool more = scanner.Next(&r, &skip, &had_skip);
      if (had_skip) {
        dropped.emplace_back(skip.begin, skip.end);
        Add(static_cast<int64_t>(skip.begin),
            absl::StrCat(skip.reason, "; ", skip.end - skip.begin, " bytes [", skip.begin, ", ",
                         skip.end, ") skipped", skip.end < data.size() ? " to the next valid record"
                                                                       : " to the end"));
      }
      if (!more) break;
      entries_.push_back({r.offset, kRecordOverhead + r.data.size()});
      CheckSchema(r.data, r.offset);
      if (!o_.salvage_dir.empty()) good.emplace_back(r.data);
    }
    if (!stream_error.ok()) {
      Add(-1, absl::StrCat(StripLocation(std::string(stream_error.message()), path_),
                           " (compressed offset; the rest of the file is unreadable)"));
    }
    if (!o_.salvage_dir.empty()) RETURN_IF_ERROR(Salvage(good, dropped));
    return absl::OkStatus();
  }

  absl::Status Salvage(const std::vector<std::string>& good,
                       const std::vector<std::pair<uint64_t, uint64_t>>& dropped) {
    SalvageResult& s = result_.salvage;
    RETURN_IF_ERROR(guard_->Check(path_, o_.salvage_dir));
    s.output = SalvageGuard::OutputFor(path_, o_.salvage_dir);
    RecordWriterOptions wo;
    wo.compression = compression_;
    wo.overwrite = o_.overwrite;
    ASSIGN_OR_RETURN(auto writer, RecordWriter::Create(s.output, wo));
    for (const std::string& r : good) RETURN_IF_ERROR(writer->WriteRecord(r));
    std::vector<IndexEntry> index = writer->index();
    RETURN_IF_ERROR(writer->Close());
    RETURN_IF_ERROR(WriteIndexFile(IndexPathFor(s.output), index));
    s.records_kept = static_cast<int64_t>(good.size());
    s.regions_dropped = static_cast<int64_t>(dropped.size());
    s.dropped_ranges = dropped;
    int64_t expected = listed_ ? listed_->records() : -1;
    if (expected < 0) {
      auto idx = ReadIndexFile(IndexPathFor(path_));
      if (idx.ok()) expected = static_cast<int64_t>(idx->size());
    }
    if (expected >= 0) s.records_dropped = expected - s.records_kept;
    result_.salvaged = true;
    return absl::OkStatus();
  }

  void CheckIndex() {
    const std::string index_path = IndexPathFor(path_);
    if (!PathExists(index_path)) {
      if (require_index_) Add(-1, absl::StrCat("no index file (", Basename(index_path), ")"));
      return;
    }
    auto index = ReadIndexFile(index_path);
    if (!index.ok()) {
      problems_.push_back({index_path, -1, StripLocation(std::string(index.status().message()), index_path)});
      return;
    }
    if (result_.damaged) return;  // the framing problems say it all
    for (size_t i = 0; i < std::min(index->size(), entries_.size()); ++i) {
      if (!((*index)[i] == entries_[i])) {
        problems_.push_back({index_path, -1,
                             absl::StrCat("stale or wrong: line ", i + 1, " says offset ",
                                          (*index)[i].offset, " size ", (*index)[i].size,
                                          ", the record is at ", entries_[i].offset, " size ",
                                          entries_[i].size)});
        return;
      }
    }
    if (index->size() != entries_.size()) {
      problems_.push_back({index_path, -1,
                           absl::StrCat("stale: lists ", index->size(), " records, the shard holds ",
                                        entries_.size())});
    }
  }

  // A zero-byte file: no index to compare, no checksum worth computing.
  absl::Status CheckEmpty() {
    result_.empty = true;
    if (listed_ != nullptr && listed_->records() > 0) {
      Add(-1, absl::StrCat("is empty (0 bytes); the manifest lists ",
                           Plural(listed_->records(), "record"), " for it"));
    } else {
      notes_.push_back({path_, -1, "empty shard (0 bytes, no records)"});
    }
    return absl::OkStatus();
  }

  absl::Status CheckListed() {
    if (listed_ == nullptr) return absl::OkStatus();
    if (listed_->records() != result_.records) {
      Add(-1, absl::StrCat("holds ", result_.records, " records, the manifest says ",
                           listed_->records()));
    }
    if (static_cast<uint64_t>(listed_->bytes()) != result_.bytes) {
      Add(-1, absl::StrCat("is ", result_.bytes, " bytes, the manifest says ", listed_->bytes()));
    }
    if (!listed_->crc32c().empty()) {
      uint32_t crc = file_crc_;
      if (!fold_file_crc_ || result_.damaged) {
        ASSIGN_OR_RETURN(crc, FileCrc32c(path_));
      }
      std::string hex = absl::StrFormat("%08x", crc);
      if (hex != listed_->crc32c()) {
        Add(-1, absl::StrCat("checksum ", hex, " differs from the manifest's ", listed_->crc32c()));
      }
    }
    return absl::OkStatus();
  }

  const std::string path_;
  const Schema* schema_;
  const ShardInfo* listed_;
  const MediaSchema* media_schema_;
  bool require_index_;
  const CheckOptions& o_;
  MediaChecker media_;
  const SalvageGuard* guard_ = nullptr;
  Compression compression_ = Compression::kNone;
  ShardResult result_;
  std::vector<CheckProblem> problems_;
  std::vector<CheckProblem> notes_;
  SchemaInference inference_;
  std::vector<IndexEntry> entries_;
  int schema_problems_ = 0;
  bool fold_file_crc_ = false;
  uint32_t file_crc_ = 0;
  std::function<void(uint64_t)> progress_;
  uint64_t progress_at_ = 0;
};

}  // namespace

namespace {

// Shards checked without a manifest: the schema inferred from all of their
// records, and a problem where a feature's kind differs from the one most
// records give it (at the first such record of each shard).
SchemaReport InferredSchema(const std::vector<std::string>& paths,
                            const std::vector<const SchemaInference*>& shards,
                            std::vector<CheckProblem>* problems) {
  SchemaInference all;
  for (const SchemaInference* s : shards) all.Merge(*s);
  for (const auto& [key, total] : all.features()) {
    if (!total.conflicting()) continue;
    const FeatureKind want = total.kind();
    for (size_t i = 0; i < shards.size(); ++i) {
      auto it = shards[i]->features().find(key);
      if (it == shards[i]->features().end()) continue;
      for (int k = 1; k <= 3; ++k) {
        const auto kind = static_cast<FeatureKind>(k);
        if (kind == want || it->second.records[k] == 0) continue;
        problems->push_back(
            {paths[i], it->second.first_offset[k],
             absl::StrCat("feature '", key, "' is ", FeatureKindName(kind), " in ",
                          it->second.records[k], " records of this shard (the first here), ",
                          FeatureKindName(want), " in ", total.records[static_cast<int>(want)],
                          " records of the dataset")});
      }
    }
  }
  SchemaReport r;
  r.source = absl::StrCat("inferred from ", Plural(all.records(), "record"), " in ",
                          Plural(static_cast<int64_t>(shards.size()), "shard"));
  r.inferred = true;
  r.features = all.Schema();
  for (const auto& [key, n] : all.feature_lists()) r.feature_lists.push_back(key);
  return r;
}

}  // namespace

absl::StatusOr<CheckReport> Check(const std::vector<std::string>& paths, const CheckOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CheckInputs> expanded = ExpandCheckInputs(paths);
  if (absl::IsInvalidArgument(expanded.status())) {
    // Folders holding nothing but what killed runs left: a report that says
    // so (there is nothing to train on), leftovers listed.
    CheckReport report;
    for (const std::string& p : paths) {
      if (!IsDirectory(p)) continue;
      const std::string dir = StripTrailingSlashes(p);
      std::vector<std::string> found = FindLeftovers(dir);
      if (found.empty()) continue;
      report.problems.push_back(
          {dir, -1, absl::StrCat("no shards, only ", Plural(static_cast<int64_t>(found.size()),
                                                             "temporary file"),
                                 " that interrupted shardfeed runs left (a conversion that did "
                                 "not finish: run it again)")});
      report.leftovers.insert(report.leftovers.end(), found.begin(), found.end());
    }
    if (!report.leftovers.empty()) return report;
  }
  if (!expanded.ok()) return expanded.status();
  CheckInputs in = std::move(*expanded);
  std::optional<SalvageGuard> guard;
  if (!o.salvage_dir.empty()) {
    guard.emplace(in.shards);
    ::mkdir(o.salvage_dir.c_str(), 0755);
    if (!IsDirectory(o.salvage_dir)) {
      return absl::InvalidArgumentError(absl::StrCat(o.salvage_dir, ": cannot create the salvage folder"));
    }
  }
  // Shards a manifest lists follow its schema; the others, the schema
  // inferred from all of them (after the pass, from each shard's counts).
  std::vector<Schema> manifest_schemas;
  std::vector<MediaSchema> manifest_media;
  for (const auto& [path, m] : in.manifests) {
    manifest_schemas.push_back(SchemaFromManifest(m));
    manifest_media.push_back(MediaSchemaFor(&m, o.decode));
  }
  const MediaSchema loose_media = MediaSchemaFor(nullptr, o.decode);
  uint64_t total_bytes = 0;
  for (const auto& s : in.shards) {
    struct stat st;
    if (::stat(s.c_str(), &st) == 0) total_bytes += static_cast<uint64_t>(st.st_size);
  }

  CheckReport report;
  report.manifest = absl::StrJoin(in.manifest_paths, " ");
  report.problems = std::move(in.problems);
  std::vector<std::string> checked = in.shards;
  checked.insert(checked.end(), in.manifest_paths.begin(), in.manifest_paths.end());
  report.leftovers = FindLeftoversBeside(checked);
  report.shards.resize(in.shards.size());
  std::vector<std::vector<CheckProblem>> shard_problems(in.shards.size());
  std::vector<std::vector<CheckProblem>> shard_notes(in.shards.size());
  std::vector<SchemaInference> inferred(in.shards.size());
  std::vector<std::unique_ptr<MediaChecker>> media(in.shards.size());
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> bytes_done{0};
  std::mutex mu;
  absl::Status first_error;
  const int threads = std::max<int>(
      1, std::min<int>(o.threads > 0 ? o.threads : std::thread::hardware_concurrency(),
                       static_cast<int>(in.shards.size())));
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < in.shards.size();) {
      auto it = in.listed.find(in.shards[i]);
      const bool listed = it != in.listed.end();
      ShardChecker checker(in.shards[i], listed ? &manifest_schemas[it->second.second] : nullptr,
                           listed ? &it->second.first : nullptr,
                           listed ? &manifest_media[it->second.second] : &loose_media,
                           /*require_index=*/listed, o);
      uint64_t reported = 0;  // of this shard's bytes
      auto advance = [&](uint64_t position) {
        if (position <= reported) return;
        const uint64_t done = bytes_done.fetch_add(position - reported) + position - reported;
        reported = position;
        std::lock_guard<std::mutex> lock(mu);
        o.progress(done, total_bytes);
      };
      checker.set_progress(advance);
      if (guard.has_value()) checker.set_salvage_guard(&*guard);
      absl::Status s = checker.Run();
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = s;
        continue;
      }
      report.shards[i] = std::move(checker.result());
      shard_problems[i] = std::move(checker.problems());
      shard_notes[i] = std::move(checker.notes());
      inferred[i] = checker.inference();
      media[i] = std::make_unique<MediaChecker>(std::move(checker.media()));
      advance(report.shards[i].bytes);
    }
  };
  // Threads the process cannot start (its limit) are not fatal: the shards
  // are shared by the workers that did start, or checked on this thread.
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;
    }
  }
  if (pool.empty()) worker();
  for (auto& t : pool) t.join();
  RETURN_IF_ERROR(first_error);
  if (guard.has_value()) {
    absl::StatusOr<std::string> written =
        WriteSalvageManifest(in, report.shards, o.salvage_dir, o.overwrite);
    if (absl::IsInvalidArgument(written.status())) {
      report.notes.push_back({o.salvage_dir, -1, std::string(written.status().message())});
    } else if (!written.ok()) {
      return written.status();
    } else {
      report.salvage_manifest = *written;
    }
  }

  std::vector<std::string> unlisted_paths;
  std::vector<const SchemaInference*> unlisted;
  for (size_t i = 0; i < report.shards.size(); ++i) {
    report.records += report.shards[i].records;
    report.bytes += report.shards[i].bytes;
    for (auto& p : shard_problems[i]) report.problems.push_back(std::move(p));
    for (auto& p : shard_notes[i]) report.notes.push_back(std::move(p));
    if (!in.listed.count(in.shards[i])) {
      unlisted_paths.push_back(in.shards[i]);
      unlisted.push_back(&inferred[i]);
    }
  }
  if (!o.raw) {
    std::vector<const MediaChecker*> checkers;
    for (const auto& m : media) {
      if (m != nullptr) checkers.push_back(m.get());
    }
    ResolveSuspects(checkers, &report.problems);
    for (const auto& [path, m] : in.manifests) {
      SchemaReport r;
      r.source = path;
      r.features.assign(m.features().begin(), m.features().end());
      report.schemas.push_back(std::move(r));
    }
    if (!unlisted.empty()) {
      report.schemas.push_back(InferredSchema(unlisted_paths, unlisted, &report.problems));
    }
  }
  std::stable_sort(report.problems.begin(), report.problems.end(),
                   [](const CheckProblem& a, const CheckProblem& b) {
                     return std::tie(a.file, a.offset) < std::tie(b.file, b.offset);
                   });
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace shardfeed
