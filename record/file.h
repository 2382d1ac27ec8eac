// Files with RAII descriptors: a sequential reader and an output file that
// appears under its final name only when complete.
//
// Neither class is thread-safe (except ReadableFile::ReadAt, a pread); use
// one per thread. Errors are absl::Status with the path and strerror() in
// the message. ReadFileToString, WriteFileAtomically and PathExists also
// take remote paths (record/storage.h).
#ifndef SHARDFEED_RECORD_FILE_H_
#define SHARDFEED_RECORD_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "record/source.h"

namespace shardfeed {

// A file opened for sequential reading with large read(2) calls, and the
// local peer of remote objects behind RandomAccessSource.
class ReadableFile : public RandomAccessSource {
 public:
  static absl::StatusOr<std::unique_ptr<ReadableFile>> Open(const std::string& path);
  ~ReadableFile() override;
  ReadableFile(const ReadableFile&) = delete;
  ReadableFile& operator=(const ReadableFile&) = delete;

  // Reads up to n bytes into dst; returns the count, 0 only at end of file.
  absl::StatusOr<size_t> Read(char* dst, size_t n);
  // Reads exactly n bytes at `offset` (pread); fewer only at end of file.
  // Thread-safe.
  absl::StatusOr<size_t> ReadAt(uint64_t offset, char* dst, size_t n) const override;
  // Moves the sequential position.
  absl::Status Seek(uint64_t offset);

  uint64_t size() const override { return size_; }
  const std::string& path() const override { return path_; }
  const std::string& local_path() const override { return path_; }

 private:
  ReadableFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_;
  uint64_t size_;
};

// Reads a whole (small) file, local or remote, into a string.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `contents` to `path` atomically (temporary name, then rename; a
// remote object is uploaded in one PUT, which is atomic).
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 bool overwrite = true);

// An output file written under a temporary name beside `path`
// ("path.tmp-PID-N") and renamed to `path` by Commit(). If the object is
// destroyed without a successful Commit(), the temporary is removed, so a
// half-written file never carries the final name.
class AtomicOutputFile {
 public:
  // Fails with ALREADY_EXISTS when `path` exists and !overwrite.
  static absl::StatusOr<std::unique_ptr<AtomicOutputFile>> Create(
      const std::string& path, bool overwrite);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  // Appends all of `data` (unbuffered: callers write large blocks).
  absl::Status Append(absl::string_view data);
  // Flushes to disk, closes and renames to the final name. Once only.
  absl::Status Commit();
  // Closes and removes the temporary. Safe to call more than once.
  void Abandon();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  uint64_t bytes_written() const { return bytes_written_; }
  // CRC32C of every byte appended so far (the file's checksum), unless the
  // caller computes it itself (set_compute_crc32c(false), before appending).
  uint32_t crc32c() const { return crc32c_; }
  void set_compute_crc32c(bool on) { compute_crc32c_ = on; }

 private:
  AtomicOutputFile(std::string path, std::string temp_path, int fd, bool overwrite)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd),
        overwrite_(overwrite) {}
  std::string path_;
  std::string temp_path_;
  int fd_;
  bool overwrite_;
  uint64_t bytes_written_ = 0;
  uint32_t crc32c_ = 0;
  bool compute_crc32c_ = true;
};

// Creates the local folder `dir` and its parents (mode 0755 less umask).
absl::Status MakeDirs(const std::string& dir);

// True when the path exists (any file type; a remote object or folder).
// Errors (a remote path that cannot be reached) count as absent: callers
// that must tell them apart use StatPath (record/storage.h).
bool PathExists(const std::string& path);

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_FILE_H_
