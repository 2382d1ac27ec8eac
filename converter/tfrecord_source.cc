// tfrecord: reshards an existing TFRecord dataset (TensorFlow's, any
// compression, with or without extension; a folder, glob or manifest.json,
// resolved as reader/shard_discovery.h says) into shardfeed's pre-shuffled
// shards with index files and a manifest. Records are copied as they are
// (Examples, SequenceExamples or anything else); the manifest's schema is the
// input manifest's, else the one inferred from all records
// (reader/schema_inference.h). Splits: converter/tfrecord_scan.h.
//
// Open() reads every record once, in order (CRCs verified, schema inferred,
// records counted; a remote shard in record/input_stream.h's large ranges).
// Records of uncompressed local shards are then read in place at their
// offsets; those of compressed shards and of remote ones (s3://, gs://,
// https://: reading them in place would cost a range request per record, in
// shuffled order) are copied during that scan, uncompressed, into a spool
// file in $TMPDIR (unlinked at once: the space is freed when the source is
// destroyed; it needs as much free space as those records).
// BuildRecord verifies both CRCs again before handing a record on.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "converter/source.h"
#include "converter/tfrecord_scan.h"
#include "record/crc32c.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/record_format.h"
#include "record/record_writer.h"
#include "record/status_macros.h"
#include "record/storage.h"

namespace shardfeed {
namespace {

struct Item {
  uint32_t file;    // into files_
  uint64_t offset;  // of the framed record
  uint64_t size;    // framed
};

class TfRecordSource : public Source {
 public:
  std::vector<std::string> splits() const override { return splits_; }
  size_t num_samples(size_t split) const override { return items_[split].size(); }

  absl::StatusOr<std::string> BuildRecord(size_t split, size_t index) const override {
    const Item& item = items_[split][index];
    std::string framed(item.size, '\0');
    ASSIGN_OR_RETURN(size_t got, files_[item.file]->ReadAt(item.offset, framed.data(), framed.size()));
    if (got < framed.size()) {
      return DataLossAt(names_[item.file], item.offset, "the file is shorter than when it was read");
    }
    const uint64_t length = framed.size() - kRecordOverhead;
    const char* data = framed.data() + kRecordHeaderSize;
    if (DecodeFixed64(framed.data()) != length ||
        DecodeFixed32(framed.data() + 8) != crc32c::Mask(crc32c::Value(framed.data(), 8)) ||
        DecodeFixed32(data + length) != crc32c::Mask(crc32c::Value(data, length))) {
      return DataLossAt(names_[item.file], item.offset,
                        "the record changed since it was read (CRC mismatch)");
    }
    return framed;
  }

  std::vector<FeatureSchema> schema() const override { return schema_; }
  std::vector<std::string> warnings() const override { return warnings_; }

  // Whether a shard's records are read from the spool (see the file comment).
  static bool Spooled(const ScannedShard& shard) {
    return shard.compression != Compression::kNone || IsRemotePath(shard.path);
  }

  absl::Status Open(const std::string& input) {
    std::unique_ptr<RecordWriter> spool;
    const char* tmp = std::getenv("TMPDIR");
    const std::string spool_path = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp",
                                                "/.shardfeed-spool-", ::getpid(), ".tfrecord");
    auto visit = [&](const ScannedShard& shard, absl::string_view record,
                     uint64_t) -> absl::Status {
      if (!Spooled(shard)) return absl::OkStatus();
      if (spool == nullptr) {
        RecordWriterOptions wo;
        wo.overwrite = true;
        ASSIGN_OR_RETURN(spool, RecordWriter::Create(spool_path, wo));
      }
      return spool->WriteRecord(record);
    };
    ASSIGN_OR_RETURN(ScannedDataset scan, ScanTfRecordDataset({input}, visit));
    std::vector<IndexEntry> spooled;
    if (spool != nullptr) {
      spooled = spool->index();
      RETURN_IF_ERROR(spool->Close());
      absl::StatusOr<std::unique_ptr<ReadableFile>> spooled_file = ReadableFile::Open(spool_path);
      ::unlink(spool_path.c_str());
      if (!spooled_file.ok()) return spooled_file.status();
      files_.push_back(*std::move(spooled_file));
      names_.push_back(absl::StrCat(input, " (spooled copy)"));
    }
    splits_ = scan.splits;
    items_.resize(splits_.size());
    size_t next_spooled = 0;
    for (const ScannedShard& shard : scan.shards) {
      const size_t split = static_cast<size_t>(
          std::find(splits_.begin(), splits_.end(), shard.split) - splits_.begin());
      uint32_t file = 0;  // the spool
      if (!Spooled(shard)) {
        file = static_cast<uint32_t>(files_.size());
        ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessSource> source, OpenSource(shard.path));
        files_.push_back(std::move(source));
        names_.push_back(shard.path);
      }
      for (const IndexEntry& e : shard.index) {
        const IndexEntry& at = Spooled(shard) ? spooled[next_spooled++] : e;
        items_[split].push_back({file, at.offset, at.size});
      }
    }
    schema_ = scan.Schema();
    if (scan.non_examples > 0) {
      warnings_.push_back(absl::StrCat(scan.non_examples, " of ", scan.inference.records() +
                                                                       scan.non_examples,
                                       " records are not Examples: copied as they are"));
    }
    return absl::OkStatus();
  }

 private:
  std::vector<std::string> splits_;
  std::vector<std::vector<Item>> items_;  // per split
  std::vector<std::unique_ptr<RandomAccessSource>> files_;
  std::vector<std::string> names_;  // for messages, per file
  std::vector<FeatureSchema> schema_;
  std::vector<std::string> warnings_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> OpenTfRecordSource(const SourceOptions& o) {
  auto source = std::make_unique<TfRecordSource>();
  RETURN_IF_ERROR(source->Open(o.input));
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace shardfeed
