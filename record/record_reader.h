// RecordReader: reads the records of one TFRecord file in order.
//
// The byte layout is in record/record_format.h. Reads are large (MB-sized)
// and sequential; a record is handed out as a view into the reader's buffer,
// without a copy, valid until the next call on the reader.
//
// Status codes of ReadRecord():
//   OK            a record was read (both CRCs verified unless disabled);
//   OUT_OF_RANGE  clean end of data, at a record boundary;
//   DATA_LOSS     corruption, with "FILE:OFFSET: what is wrong", where OFFSET
//                 is the record's offset in the (decompressed) stream: a CRC
//                 mismatch, a truncated record, a truncated header (which
//                 TensorFlow silently takes for the end of the file; we do
//                 not lose data silently), or a damaged compressed stream;
//   others        I/O errors (file names and strerror in the message).
// After an error other than OUT_OF_RANGE, the reader is unusable.
//
// Not thread-safe: one reader per thread.
//
// Example:
//   ASSIGN_OR_RETURN(auto reader, RecordReader::Open("data.tfrecord"));
//   absl::string_view record;
//   absl::Status s;
//   while ((s = reader->ReadRecord(&record)).ok()) Use(record);
//   if (!absl::IsOutOfRange(s)) return s;
#ifndef SHARDFEED_RECORD_RECORD_READER_H_
#define SHARDFEED_RECORD_RECORD_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "record/compression.h"
#include "record/input_stream.h"

namespace shardfeed {

struct RecordReaderOptions {
  // kAuto: decided from the file's first bytes, then its name
  // (see DetectCompression). Default: kAuto.
  Compression compression = Compression::kAuto;
  // Bytes per read(2) and initial buffer size; the buffer grows to hold a
  // record larger than this. 1 MiB keeps the bytes in L2 for the CRC that
  // follows each read (faster than 4 MiB, see BENCHMARKS.md). Default: 1 MiB.
  size_t buffer_size = 1 << 20;
  // Verify the data CRC of each record (the length CRC is always checked).
  // Default: true.
  bool verify_data_crc = true;
};

class RecordReader {
 public:
  static absl::StatusOr<std::unique_ptr<RecordReader>> Open(
      const std::string& path, const RecordReaderOptions& options = {});
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads the next record into *record (a view valid until the next call).
  absl::Status ReadRecord(absl::string_view* record);

  // Positions the reader so that the next record read starts at `offset`
  // (an offset from an index file). Uncompressed files seek; compressed ones
  // decompress from the start and skip.
  absl::Status SeekToOffset(uint64_t offset);

  // Offset of the next record (in the decompressed stream).
  uint64_t offset() const { return offset_; }
  // Offset of the record last returned.
  uint64_t last_record_offset() const { return last_record_offset_; }
  // The (unmasked) data CRC stored with the record last returned, for
  // callers that read with verify_data_crc = false and verify elsewhere
  // (e.g. on another thread).
  uint32_t last_stored_data_crc() const { return last_stored_data_crc_; }
  Compression compression() const { return compression_; }
  const std::string& path() const { return path_; }
  // Size of the file on disk (compressed size for compressed files).
  uint64_t file_size() const { return file_size_; }
  // Bytes of the file on disk read so far (compressed bytes for compressed
  // files; read ahead of the records returned): for progress within a file.
  uint64_t file_position() const;

 private:
  RecordReader(std::string path, std::unique_ptr<InputStream> stream,
               Compression compression, uint64_t file_size,
               const RecordReaderOptions& options);
  // Makes `n` contiguous unread bytes available at buf_[pos_]; returns how
  // many are available (fewer than n only at end of stream).
  absl::StatusOr<size_t> Ensure(size_t n);

  std::string path_;
  std::unique_ptr<InputStream> stream_;
  Compression compression_;
  uint64_t file_size_;
  RecordReaderOptions options_;
  std::vector<char> buf_;
  size_t pos_ = 0;  // first unread byte in buf_
  size_t end_ = 0;  // one past the last valid byte in buf_
  bool eof_ = false;
  uint64_t offset_ = 0;
  uint64_t last_record_offset_ = 0;
  uint32_t last_stored_data_crc_ = 0;
};

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_RECORD_READER_H_
