// RecordWriter: writes one TFRecord file, byte-compatible with TensorFlow's
// tf.io.TFRecordWriter for NONE, ZLIB and GZIP.
//
// The file is written under a temporary name beside `path` and renamed to
// `path` only by a successful Close(); a writer destroyed without Close()
// (an error, an exception, a kill) leaves no file under the final name.
// Calls after Close() fail with FAILED_PRECONDITION. Not thread-safe.
//
// Example:
//   ASSIGN_OR_RETURN(auto writer, RecordWriter::Create("out.tfrecord", {}));
//   for (const std::string& r : records) RETURN_IF_ERROR(writer->WriteRecord(r));
//   RETURN_IF_ERROR(writer->Close());
#ifndef SHARDFEED_RECORD_RECORD_WRITER_H_
#define SHARDFEED_RECORD_RECORD_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "record/compression.h"
#include "record/file.h"
#include "record/index.h"

namespace shardfeed {

struct RecordWriterOptions {
  // kNone, kZlib or kGzip (kAuto means: from the file name). Default: kNone.
  Compression compression = Compression::kNone;
  // zlib level 0..9, or -1 for zlib's default (6). Default: -1.
  int compression_level = -1;
  // Bytes per write(2): every write but the last ends at a multiple of this
  // in the (uncompressed) stream. 2 MiB leaves the page cache holding the
  // file in 2 MiB folios, which readers that map it (the loader's shuffled
  // path) get as huge pages: fewer TLB misses, a cheaper unmap. Default: 2 MiB.
  size_t buffer_size = 2 << 20;
  // Replace an existing file at `path`. Default: false.
  bool overwrite = false;
};

class RecordWriter {
 public:
  static absl::StatusOr<std::unique_ptr<RecordWriter>> Create(
      const std::string& path, const RecordWriterOptions& options);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Frames and appends one record.
  absl::Status WriteRecord(absl::string_view data);
  // Appends one record already framed by the caller (length, masked CRC of
  // the length, data, masked CRC of the data), e.g. on another thread. Only
  // the length is checked (INVALID_ARGUMENT if it disagrees with the size).
  absl::Status WriteFramedRecord(absl::string_view framed);
  // Finishes the stream, syncs, and renames the file to its final name.
  absl::Status Close();

  // Offset and framed size of every record written so far (offsets in the
  // uncompressed stream): the content of the shard's index file.
  const std::vector<IndexEntry>& index() const { return index_; }
  // Uncompressed bytes written so far (the offset of the next record).
  uint64_t offset() const { return offset_; }
  // Bytes on disk (compressed size); final after Close().
  uint64_t file_bytes() const;
  // CRC32C of the file's bytes on disk; final after Close().
  uint32_t file_crc32c() const { return final_file_crc32c_; }
  const std::string& path() const { return path_; }

 private:
  class Deflater;
  RecordWriter(std::string path, std::unique_ptr<AtomicOutputFile> file,
               const RecordWriterOptions& options);
  absl::Status Emit(absl::string_view bytes);
  absl::Status FlushBuffer();
  absl::Status Write(absl::string_view bytes);  // to the file (or the deflater)

  std::string path_;
  std::unique_ptr<AtomicOutputFile> file_;
  RecordWriterOptions options_;
  std::unique_ptr<Deflater> deflater_;
  std::string buffer_;
  std::vector<IndexEntry> index_;
  uint64_t offset_ = 0;
  uint64_t streamed_ = 0;  // bytes handed to Write()
  bool closed_ = false;
  uint64_t final_file_bytes_ = 0;
  uint32_t final_file_crc32c_ = 0;
  // Uncompressed files: the file's CRC32C, folded in per record from the
  // header, the data's CRC (crc32c::Combine) and the footer, so the data is
  // checksummed once, not twice.
  uint32_t folded_file_crc32c_ = 0;
  void FoldRecord(const char* header, uint32_t data_crc, uint64_t length, const char* footer);
};

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_RECORD_WRITER_H_
