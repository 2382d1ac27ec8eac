#include "converter/dataset_writer.h"

#include <unistd.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "cli/version.h"
#include "converter/convert.h"
#include "converter/example_encoder.h"
#include "converter/leftovers.h"
#include "converter/output_dir.h"
#include "converter/task_part.h"
#include "record/file.h"
#include "record/storage.h"
#include "record/record_format.h"
#include "record/status_macros.h"

namespace shardfeed {

DatasetWriter::DatasetWriter(const DatasetWriterOptions& o) : o_(o), rng_(o.seed) {}

absl::StatusOr<std::unique_ptr<DatasetWriter>> DatasetWriter::Create(
    const DatasetWriterOptions& o) {
  if (o.output_dir.empty()) return absl::InvalidArgumentError("the output folder is required");
  if (o.prefix.empty() || o.prefix.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("bad prefix '", o.prefix, "'"));
  }
  if (o.shard_size < kRecordOverhead) return absl::InvalidArgumentError("shard_size is too small");
  if (o.compression == Compression::kAuto) {
    return absl::InvalidArgumentError("compression must be none, zlib or gzip");
  }
  std::unique_ptr<DatasetWriter> w(new DatasetWriter(o));
  if (IsRemotePath(o.output_dir)) {
    if (o.task_count > 0) {
      return absl::UnimplementedError(absl::StrCat(
          o.output_dir, ": the tasks of a distributed job write their parts to a shared folder; "
          "then `shardfeed merge DIR --output ", o.output_dir, "` uploads the dataset"));
    }
    ASSIGN_OR_RETURN(w->bucket_, BucketOutput::Prepare(o.output_dir, {o.prefix}, o.overwrite));
    ASSIGN_OR_RETURN(w->staging_, StagingFolder::Create());
    w->o_.output_dir = w->staging_->path();
    w->o_.overwrite = false;
  }
  const DatasetWriterOptions& local = w->o_;
  if (local.task_count > 0) {
    RETURN_IF_ERROR(BeginPart(o.output_dir, o.task_index, o.task_count));
    w->folder_ = PartFolder(o.output_dir, o.task_index, o.task_count);
  } else {
    ASSIGN_OR_RETURN(w->previous_,
                     PreviousDatasetToReplace(local.output_dir, {o.prefix}, local.overwrite));
    RETURN_IF_ERROR(MakeDirs(local.output_dir));
    RETURN_IF_ERROR(RemoveConvertLeftovers(local.output_dir, {o.prefix}).status());
    w->folder_ = local.output_dir;
  }
  w->writer_ = std::make_unique<ShardSequenceWriter>(
      ShardSequenceOptions{w->folder_, o.prefix, o.split, o.compression, o.compression_level},
      ShardBoundaryRule(o.shard_size, 0, 0), &w->shards_);
  return w;
}

absl::Status DatasetWriter::Emit(const std::string& framed) {
  RETURN_IF_ERROR(writer_->Add(framed));
  ++records_;
  bytes_ += framed.size();
  return absl::OkStatus();
}

absl::Status DatasetWriter::Write(std::string record) {
  if (closed_) return absl::FailedPreconditionError("the writer is closed");
  if (record.size() < kRecordHeaderSize) return absl::InvalidArgumentError("record without room");
  ExampleEncoder::FrameInPlace(&record);
  if (o_.shuffle_window == 0) return Emit(record);
  window_.push_back(std::move(record));
  if (window_.size() < o_.shuffle_window) return absl::OkStatus();
  // A full window: one record, drawn uniformly, goes out.
  std::swap(window_[rng_() % window_.size()], window_.back());
  absl::Status s = Emit(window_.back());
  window_.pop_back();
  return s;
}

absl::StatusOr<Manifest> DatasetWriter::Close(const std::vector<FeatureSchema>& features,
                                              const std::function<bool()>& cancelled) {
  if (closed_) return absl::FailedPreconditionError("the writer is closed");
  closed_ = true;
  for (size_t i = window_.size(); i > 1; --i) std::swap(window_[i - 1], window_[rng_() % i]);
  for (const std::string& r : window_) RETURN_IF_ERROR(Emit(r));
  window_.clear();
  RETURN_IF_ERROR(writer_->Finish());

  Manifest m;
  m.set_format_version(1);
  m.set_tool("shardfeed");
  m.set_tool_version(kVersion);
  m.set_source_type(o_.source);
  ConvertSettings* settings = m.mutable_options();
  settings->set_shard_size(o_.shard_size);
  settings->set_shuffle(o_.shuffle_window > 0);
  settings->set_seed(o_.seed);
  settings->set_compression(CompressionName(o_.compression));
  for (const FeatureSchema& f : features) *m.add_features() = f;
  const int64_t count = static_cast<int64_t>(shards_.shards().size());
  RETURN_IF_ERROR(shards_.Finalize(folder_, o_.compression, &m));
  SplitInfo* split = m.add_splits();
  split->set_name(o_.split);
  split->set_records(static_cast<int64_t>(records_));
  split->set_shards(count);
  if (o_.task_count > 0) {
    TaskPart part;
    part.set_task_index(o_.task_index);
    part.set_task_count(o_.task_count);
    part.set_planned(false);
    part.add_split_prefixes(o_.prefix);
    *part.mutable_manifest() = m;
    RETURN_IF_ERROR(CommitPart(o_.output_dir, part));
    return m;
  }
  std::set<std::string> written;
  for (const ShardInfo& sh : m.shards()) written.insert({sh.file(), sh.index_file()});
  for (const std::string& f : previous_) {
    if (f != "manifest.json" && !written.count(f)) {
      ::unlink(absl::StrCat(o_.output_dir, "/", f).c_str());
    }
  }
  if (bucket_.has_value()) {
    RETURN_IF_ERROR(
        bucket_->Publish(DatasetFiles(o_.output_dir, m), ManifestToJson(m), nullptr, cancelled));
    return m;
  }
  RETURN_IF_ERROR(
      WriteFileAtomically(absl::StrCat(o_.output_dir, "/manifest.json"), ManifestToJson(m)));
  return m;
}

}  // namespace shardfeed
