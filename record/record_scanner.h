// RecordScanner: walks a whole (decompressed) TFRecord byte stream held in
// memory and keeps going past corruption, the way `shardfeed check` and
// `--salvage` need: after a damaged region it re-synchronizes on the next
// offset where a complete record with a valid length CRC and a valid data
// CRC starts, and reports the skipped byte range and why it was skipped
// (as leveldb's log reader and riegeli's skipped regions do).
//
// Not thread-safe; views point into `data`, which must outlive the scanner.
#ifndef SHARDFEED_RECORD_RECORD_SCANNER_H_
#define SHARDFEED_RECORD_RECORD_SCANNER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace shardfeed {

struct ScannedRecord {
  uint64_t offset = 0;
  absl::string_view data;
};

struct SkippedRegion {
  uint64_t begin = 0;  // [begin, end) of the stream
  uint64_t end = 0;
  std::string reason;  // what is wrong at `begin`
};

class RecordScanner {
 public:
  explicit RecordScanner(absl::string_view data) : data_(data) {}

  // Returns the next valid record in *record (true), or false at the end.
  // If bytes were skipped to reach it (or to reach the end), *skipped
  // describes them and *had_skip is set.
  bool Next(ScannedRecord* record, SkippedRegion* skipped, bool* had_skip);

  // Why the bytes at `offset` are not a valid record, or "" if they are.
  std::string ProblemAt(uint64_t offset) const;

 private:
  absl::string_view data_;
  uint64_t pos_ = 0;
};

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_RECORD_SCANNER_H_
