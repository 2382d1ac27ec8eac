#include "record/record_scanner.h"

#include "absl/strings/str_cat.h"
#include "record/crc32c.h"
#include "record/record_format.h"

namespace shardfeed {

std::string RecordScanner::ProblemAt(uint64_t offset) const {
  const uint64_t left = data_.size() - offset;
  if (left < kRecordHeaderSize) {
    return absl::StrCat("truncated record header: the data ends after ", left, " of ",
                        kRecordHeaderSize, " header bytes");
  }
  const char* p = data_.data() + offset;
  if (crc32c::Value(p, 8) != crc32c::Unmask(DecodeFixed32(p + 8))) {
    return "corrupted record header: length CRC mismatch";
  }
  const uint64_t length = DecodeFixed64(p);
  if (length > left - kRecordOverhead || left < kRecordOverhead) {
    return absl::StrCat("truncated record: header says ", length, " data bytes, only ",
                        left < kRecordOverhead ? 0 : left - kRecordOverhead, " follow");
  }
  if (crc32c::Value(p + kRecordHeaderSize, length) !=
      crc32c::Unmask(DecodeFixed32(p + kRecordHeaderSize + length))) {
    return absl::StrCat("corrupted record: data CRC mismatch (", length, " data bytes)");
  }
  return "";
}

bool RecordScanner::Next(ScannedRecord* record, SkippedRegion* skipped, bool* had_skip) {
  *had_skip = false;
  if (pos_ >= data_.size()) return false;
  std::string problem = ProblemAt(pos_);
  if (!problem.empty()) {
    *had_skip = true;
    skipped->begin = pos_;
    skipped->reason = std::move(problem);
    // Re-synchronize: the next offset where a whole valid record starts.
    uint64_t q = pos_ + 1;
    while (q + kRecordOverhead <= data_.size()) {
      const char* p = data_.data() + q;
      if (crc32c::Value(p, 8) == crc32c::Unmask(DecodeFixed32(p + 8)) &&
          ProblemAt(q).empty()) {
        break;
      }
      ++q;
    }
    if (q + kRecordOverhead > data_.size()) q = data_.size();
    skipped->end = q;
    pos_ = q;
    if (pos_ >= data_.size()) return false;
  }
  const uint64_t length = DecodeFixed64(data_.data() + pos_);
  record->offset = pos_;
  record->data = data_.substr(pos_ + kRecordHeaderSize, length);
  pos_ += kRecordOverhead + length;
  return true;
}

}  // namespace shardfeed
