#include "record/record_reader.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "record/crc32c.h"
#include "record/errors.h"
#include "record/record_format.h"
#include "record/status_macros.h"
#include "record/storage.h"

namespace shardfeed {
namespace {

// At offset 0 a bad header most often means "not a TFRecord file at all".
std::string MaybeNotTfRecordHint(uint64_t offset) {
  if (offset != 0) return "";
  return " (is this a TFRecord file? if it is compressed, pass the compression "
         "type explicitly)";
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(
    const std::string& path, const RecordReaderOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessSource> file, OpenSource(path));
  Compression compression = options.compression;
  if (compression == Compression::kAuto) {
    char head[kRecordHeaderSize];
    ASSIGN_OR_RETURN(size_t n, file->ReadAt(0, head, sizeof(head)));
    compression = DetectCompression(path, absl::string_view(head, n));
  }
  uint64_t size = file->size();
  auto stream = MakeInputStream(std::move(file), compression);
  return std::unique_ptr<RecordReader>(
      new RecordReader(path, std::move(stream), compression, size, options));
}

RecordReader::RecordReader(std::string path, std::unique_ptr<InputStream> stream,
                           Compression compression, uint64_t file_size,
                           const RecordReaderOptions& options)
    : path_(std::move(path)), stream_(std::move(stream)), compression_(compression),
      file_size_(file_size), options_(options) {
  options_.buffer_size = std::max<size_t>(options_.buffer_size, 64);
  buf_.resize(options_.buffer_size);
}

absl::StatusOr<size_t> RecordReader::Ensure(size_t n) {
  while (end_ - pos_ < n && !eof_) {
    if (pos_ > 0 && (buf_.size() - pos_ < n || end_ == buf_.size())) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (end_ == buf_.size()) {
      // Grow only as data arrives, so a corrupt huge length cannot make us
      // allocate more than about twice what the file really holds.
      buf_.resize(buf_.size() * 2);
    }
    size_t want = std::min(buf_.size() - end_, std::max(options_.buffer_size, n - (end_ - pos_)));
    ASSIGN_OR_RETURN(size_t got, stream_->Read(buf_.data() + end_, want));
    if (got == 0) eof_ = true;
    end_ += got;
  }
  return std::min(n, end_ - pos_);
}

uint64_t RecordReader::file_position() const { return stream_->file_position(); }

absl::Status RecordReader::ReadRecord(absl::string_view* record) {
  const uint64_t start = offset_;
  ASSIGN_OR_RETURN(size_t have, Ensure(kRecordHeaderSize));
  if (have == 0) return absl::OutOfRangeError(absl::StrCat(path_, ": end of data"));
  if (have < kRecordHeaderSize) {
    return DataLossAt(path_, start,
                      absl::StrCat("truncated record header: the file ends after ", have,
                                   " of ", kRecordHeaderSize, " header bytes",
                                   MaybeNotTfRecordHint(start)));
  }
  const char* header = buf_.data() + pos_;
  const uint64_t length = DecodeFixed64(header);
  const uint32_t length_crc = crc32c::Unmask(DecodeFixed32(header + sizeof(uint64_t)));
  if (crc32c::Value(header, sizeof(uint64_t)) != length_crc) {
    return DataLossAt(path_, start,
                      absl::StrCat("corrupted record header: length CRC mismatch",
                                   MaybeNotTfRecordHint(start)));
  }
  if (compression_ == Compression::kNone && length > file_size_) {
    return DataLossAt(path_, start,
                      absl::StrCat("truncated record: header says ", length,
                                   " data bytes but the file has only ", file_size_));
  }
  const size_t framed = kRecordOverhead + static_cast<size_t>(length);
  ASSIGN_OR_RETURN(have, Ensure(framed));
  if (have < framed) {
    return DataLossAt(path_, start,
                      absl::StrCat("truncated record: expected ", framed,
                                   " bytes (header, ", length, " data bytes, footer), the file "
                                   "ends after ", have));
  }
  const char* data = buf_.data() + pos_ + kRecordHeaderSize;
  const uint32_t data_crc = crc32c::Unmask(DecodeFixed32(data + length));
  last_stored_data_crc_ = data_crc;
  if (options_.verify_data_crc) {
    if (crc32c::Value(data, length) != data_crc) {
      return DataLossAt(path_, start, absl::StrCat("corrupted record: data CRC mismatch (",
                                                   length, " data bytes)"));
    }
  }
  *record = absl::string_view(data, length);
  pos_ += framed;
  last_record_offset_ = start;
  offset_ = start + framed;
  return absl::OkStatus();
}

absl::Status RecordReader::SeekToOffset(uint64_t offset) {
  if (offset == offset_) return absl::OkStatus();
  if (compression_ == Compression::kNone) {
    if (offset > file_size_) {
      return absl::OutOfRangeError(
          absl::StrCat(path_, ": offset ", offset, " is past the end (", file_size_, ")"));
    }
    RETURN_IF_ERROR(stream_->Seek(offset));
  } else {
    if (offset < offset_) {
      RETURN_IF_ERROR(stream_->Rewind());
      pos_ = end_ = 0;
      eof_ = false;
      offset_ = 0;
    }
    uint64_t skip = offset - offset_;
    while (skip > 0) {
      ASSIGN_OR_RETURN(size_t have, Ensure(std::min<uint64_t>(skip, options_.buffer_size)));
      if (have == 0) {
        return absl::OutOfRangeError(
            absl::StrCat(path_, ": offset ", offset, " is past the end of the data"));
      }
      pos_ += have;
      skip -= have;
    }
  }
  if (compression_ == Compression::kNone) {
    pos_ = end_ = 0;
    eof_ = false;
  }
  offset_ = offset;
  return absl::OkStatus();
}

}  // namespace shardfeed
