#include "converter/shard_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "converter/leftovers.h"
#include "record/errors.h"
#include "record/index.h"
#include "record/status_macros.h"

namespace shardfeed {

bool ShardBoundaryRule::StartsShard(uint64_t framed_size) {
  bool boundary;
  if (num_shards_ > 0) {
    boundary = seen_ == next_boundary_ && seen_ < records_;
    if (boundary) {
      next_boundary_ = static_cast<uint64_t>(shards_ + 1) * records_ / num_shards_;
    }
  } else {
    boundary = shards_ == 0 || (in_shard_ > 0 && in_shard_ + framed_size > shard_size_);
  }
  if (boundary) {
    ++shards_;
    in_shard_ = 0;
  }
  in_shard_ += framed_size;
  ++seen_;
  return boundary;
}

std::string ShardName(absl::string_view prefix, int64_t k, int64_t count, Compression c) {
  const char* ext = c == Compression::kGzip   ? ".tfrecord.gz"
                    : c == Compression::kZlib ? ".tfrecord.zlib"
                                              : ".tfrecord";
  return absl::StrFormat("%s-%05d-of-%05d%s", prefix, k, count, ext);
}

PendingShards::~PendingShards() {
  for (const FinishedShard& s : shards_) {
    if (!s.temp_path.empty()) ::unlink(s.temp_path.c_str());
    if (!s.temp_index.empty()) ::unlink(s.temp_index.c_str());
  }
}

absl::Status PendingShards::Finalize(const std::string& dir, Compression c, Manifest* m) {
  std::map<std::string, int64_t> per_prefix, seen;
  for (const FinishedShard& s : shards_) ++per_prefix[s.prefix];
  for (FinishedShard& s : shards_) {
    const int64_t k = seen[s.prefix]++;
    const std::string name = s.name.empty() ? ShardName(s.prefix, k, per_prefix[s.prefix], c) : s.name;
    const std::string path = absl::StrCat(dir, "/", name);
    if (::rename(s.temp_index.c_str(), IndexPathFor(path).c_str()) != 0) {
      return IoError("cannot rename the finished index", IndexPathFor(path), errno);
    }
    s.temp_index.clear();
    if (::rename(s.temp_path.c_str(), path.c_str()) != 0) {
      return IoError("cannot rename the finished shard", path, errno);
    }
    s.temp_path.clear();
    s.info.set_file(name);
    s.info.set_index_file(name + ".index");
    *m->add_shards() = s.info;
    m->set_total_records(m->total_records() + s.info.records());
    m->set_total_bytes(m->total_bytes() + s.info.bytes());
  }
  return absl::OkStatus();
}

absl::Status ShardSequenceWriter::InUserTerms(const absl::Status& s) const {
  if (s.ok() || partial_.empty()) return s;
  return absl::Status(s.code(), ReplaceTemporaryPath(std::string(s.message()), partial_, shown_));
}

absl::Status ShardSequenceWriter::Add(absl::string_view framed) {
  if (rule_.StartsShard(framed.size())) {
    if (writer_ != nullptr) RETURN_IF_ERROR(InUserTerms(CloseShard()));
    RecordWriterOptions wo;
    wo.compression = o_.compression;
    wo.compression_level = o_.compression_level;
    wo.overwrite = true;  // our own hidden temporary
    const int64_t k = shard_count_++;
    partial_ = PartialShardPath(o_.dir, o_.prefix, k);
    shown_ = absl::StrFormat("%s (shard %s-%05d)", o_.dir, o_.prefix, k);
    auto writer = RecordWriter::Create(partial_, wo);
    if (!writer.ok()) return InUserTerms(writer.status());
    writer_ = *std::move(writer);
  }
  return InUserTerms(writer_->WriteFramedRecord(framed));
}

absl::Status ShardSequenceWriter::Finish() {
  if (writer_ != nullptr) return InUserTerms(CloseShard());
  return absl::OkStatus();
}

absl::Status ShardSequenceWriter::CloseShard() {
  std::unique_ptr<RecordWriter> w = std::move(writer_);
  FinishedShard s;
  s.prefix = o_.prefix;
  s.info.set_split(o_.split);
  s.info.set_records(static_cast<int64_t>(w->index().size()));
  s.data_bytes = w->offset();
  // The index goes to disk now, not at the end: memory stays flat however
  // many records a run writes.
  const std::string temp_index = IndexPathFor(w->path());
  RETURN_IF_ERROR(WriteIndexFile(temp_index, w->index()));
  s.temp_index = temp_index;
  absl::Status closed = w->Close();
  s.temp_path = w->path();
  if (!closed.ok()) {
    ::unlink(temp_index.c_str());
    return closed;
  }
  s.info.set_bytes(static_cast<int64_t>(w->file_bytes()));
  s.info.set_crc32c(absl::StrFormat("%08x", w->file_crc32c()));
  done_->Add(std::move(s));
  return absl::OkStatus();
}

}  // namespace shardfeed
