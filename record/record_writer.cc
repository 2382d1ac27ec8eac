#include "record/record_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "record/crc32c.h"
#include "record/record_format.h"
#include "record/status_macros.h"

namespace shardfeed {

// Whole-stream deflate into the output file (zlib or gzip wrapper), as
// TensorFlow's ZlibOutputBuffer writes it.
class RecordWriter::Deflater {
 public:
  Deflater() { std::memset(&z_, 0, sizeof(z_)); }
  ~Deflater() {
    if (initialized_) deflateEnd(&z_);
  }

  absl::Status Init(Compression compression, int level) {
    int window_bits = compression == Compression::kGzip ? 16 + MAX_WBITS : MAX_WBITS;
    if (deflateInit2(&z_, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return absl::InvalidArgumentError(
          absl::StrCat("zlib: cannot start deflate at level ", level));
    }
    initialized_ = true;
    out_.resize(1 << 20);
    return absl::OkStatus();
  }

  // Compresses `in` (flush = Z_NO_FLUSH) or finishes (Z_FINISH), writing
  // compressed bytes to `file`.
  absl::Status Run(absl::string_view in, int flush, AtomicOutputFile* file) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    for (;;) {
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = static_cast<uInt>(out_.size());
      int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return absl::InternalError("zlib: deflate failed");
      size_t produced = out_.size() - z_.avail_out;
      if (produced > 0) RETURN_IF_ERROR(file->Append(absl::string_view(out_.data(), produced)));
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (z_.avail_in == 0 && z_.avail_out != 0)) {
        return absl::OkStatus();
      }
    }
  }

 private:
  z_stream z_;
  bool initialized_ = false;
  std::string out_;
};

absl::StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Create(
    const std::string& path, const RecordWriterOptions& options) {
  RecordWriterOptions opts = options;
  if (opts.compression == Compression::kAuto) opts.compression = CompressionFromFileName(path);
  if (opts.compression_level < -1 || opts.compression_level > 9) {
    return absl::InvalidArgumentError(
        absl::StrCat("compression level must be -1..9, got ", opts.compression_level));
  }
  ASSIGN_OR_RETURN(auto file, AtomicOutputFile::Create(path, opts.overwrite));
  auto writer = std::unique_ptr<RecordWriter>(new RecordWriter(path, std::move(file), opts));
  if (opts.compression == Compression::kNone) {
    writer->file_->set_compute_crc32c(false);  // folded per record instead
  } else {
    writer->deflater_ = std::make_unique<Deflater>();
    RETURN_IF_ERROR(writer->deflater_->Init(opts.compression, opts.compression_level));
  }
  return writer;
}

RecordWriter::RecordWriter(std::string path, std::unique_ptr<AtomicOutputFile> file,
                           const RecordWriterOptions& options)
    : path_(std::move(path)), file_(std::move(file)), options_(options) {
  buffer_.reserve(options_.buffer_size);
}

RecordWriter::~RecordWriter() = default;  // the AtomicOutputFile removes the temporary

absl::Status RecordWriter::WriteRecord(absl::string_view data) {
  if (closed_) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": writer is closed"));
  }
  char header[kRecordHeaderSize];
  EncodeFixed64(header, data.size());
  EncodeFixed32(header + sizeof(uint64_t), crc32c::Mask(crc32c::Value(header, sizeof(uint64_t))));
  char footer[kRecordFooterSize];
  const uint32_t data_crc = crc32c::Value(data.data(), data.size());
  EncodeFixed32(footer, crc32c::Mask(data_crc));
  if (!deflater_) FoldRecord(header, data_crc, data.size(), footer);
  RETURN_IF_ERROR(Emit(absl::string_view(header, sizeof(header))));
  RETURN_IF_ERROR(Emit(data));
  RETURN_IF_ERROR(Emit(absl::string_view(footer, sizeof(footer))));
  const uint64_t framed = kRecordOverhead + data.size();
  index_.push_back({offset_, framed});
  offset_ += framed;
  return absl::OkStatus();
}

absl::Status RecordWriter::WriteFramedRecord(absl::string_view framed) {
  if (closed_) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": writer is closed"));
  }
  if (framed.size() < kRecordOverhead ||
      DecodeFixed64(framed.data()) != framed.size() - kRecordOverhead) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": framed record's length field disagrees with its size"));
  }
  if (!deflater_) {
    // The framer's stored data CRC stands for the data (ExampleEncoder
    // computed it over these bytes).
    const char* footer = framed.data() + framed.size() - kRecordFooterSize;
    FoldRecord(framed.data(), crc32c::Unmask(DecodeFixed32(footer)),
               framed.size() - kRecordOverhead, footer);
  }
  RETURN_IF_ERROR(Emit(framed));
  index_.push_back({offset_, framed.size()});
  offset_ += framed.size();
  return absl::OkStatus();
}

void RecordWriter::FoldRecord(const char* header, uint32_t data_crc, uint64_t length,
                              const char* footer) {
  uint32_t c = crc32c::Extend(folded_file_crc32c_, header, kRecordHeaderSize);
  c = crc32c::Combine(c, data_crc, length);
  folded_file_crc32c_ = crc32c::Extend(c, footer, kRecordFooterSize);
}

absl::Status RecordWriter::Emit(absl::string_view bytes) {
  const size_t period = std::max<size_t>(options_.buffer_size, 1);
  while (!bytes.empty()) {
    if (buffer_.empty() && streamed_ % period == 0 && bytes.size() >= period) {
      // Whole periods of a large record go straight through, without a copy.
      const size_t n = bytes.size() - bytes.size() % period;
      RETURN_IF_ERROR(Write(bytes.substr(0, n)));
      bytes.remove_prefix(n);
      continue;
    }
    // Up to the next multiple of `period` in the stream: a record may span
    // two writes.
    const size_t room = period - (streamed_ + buffer_.size()) % period;
    const size_t take = std::min(room, bytes.size());
    buffer_.append(bytes.data(), take);
    bytes.remove_prefix(take);
    if (take == room) RETURN_IF_ERROR(FlushBuffer());
  }
  return absl::OkStatus();
}

absl::Status RecordWriter::Write(absl::string_view bytes) {
  streamed_ += bytes.size();
  return deflater_ ? deflater_->Run(bytes, Z_NO_FLUSH, file_.get()) : file_->Append(bytes);
}

absl::Status RecordWriter::FlushBuffer() {
  if (buffer_.empty()) return absl::OkStatus();
  absl::Status s = Write(buffer_);
  buffer_.clear();
  return s;
}

absl::Status RecordWriter::Close() {
  if (closed_) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": writer is already closed"));
  }
  closed_ = true;
  absl::Status s = FlushBuffer();
  if (s.ok() && deflater_) s = deflater_->Run(absl::string_view(), Z_FINISH, file_.get());
  final_file_bytes_ = file_->bytes_written();
  final_file_crc32c_ = deflater_ ? file_->crc32c() : folded_file_crc32c_;
  if (s.ok()) s = file_->Commit();
  if (!s.ok()) file_->Abandon();
  return s;
}

uint64_t RecordWriter::file_bytes() const {
  return closed_ ? final_file_bytes_ : file_->bytes_written();
}

}  // namespace shardfeed
