#include "record/index.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "record/file.h"
#include "record/record_format.h"
#include "record/record_reader.h"
#include "record/status_macros.h"

namespace shardfeed {

std::string IndexPathFor(absl::string_view shard_path) {
  return absl::StrCat(shard_path, ".index");
}

std::string FormatIndex(const std::vector<IndexEntry>& entries) {
  std::string out;
  out.reserve(entries.size() * 16);
  for (const IndexEntry& e : entries) absl::StrAppend(&out, e.offset, " ", e.size, "\n");
  return out;
}

absl::StatusOr<std::vector<IndexEntry>> ParseIndex(absl::string_view text,
                                                   absl::string_view path) {
  std::vector<IndexEntry> entries;
  int line_number = 0;
  uint64_t next_offset = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.empty()) continue;
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    IndexEntry e;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &e.offset) ||
        !absl::SimpleAtoi(parts[1], &e.size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": line ", line_number, ": expected \"<offset> <size>\", got \"", line, "\""));
    }
    if (e.size < kRecordOverhead) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": line ", line_number, ": size ",
                                                     e.size, " is below the 16-byte minimum"));
    }
    if (e.size > UINT64_MAX - e.offset) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": line ", line_number, ": offset ",
                                                     e.offset, " + size ", e.size,
                                                     " is past any file (overflow)"));
    }
    if (e.offset < next_offset) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": line ", line_number, ": offset ",
                                                     e.offset, " overlaps the previous record"));
    }
    next_offset = e.offset + e.size;
    entries.push_back(e);
  }
  return entries;
}

absl::StatusOr<std::vector<IndexEntry>> ReadIndexFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseIndex(text, path);
}

absl::Status WriteIndexFile(const std::string& path, const std::vector<IndexEntry>& entries) {
  return WriteFileAtomically(path, FormatIndex(entries), /*overwrite=*/true);
}

absl::StatusOr<std::vector<IndexEntry>> BuildIndex(const std::string& shard_path) {
  ASSIGN_OR_RETURN(auto reader, RecordReader::Open(shard_path));
  std::vector<IndexEntry> entries;
  absl::string_view record;
  for (;;) {
    absl::Status s = reader->ReadRecord(&record);
    if (absl::IsOutOfRange(s)) break;
    RETURN_IF_ERROR(s);
    entries.push_back({reader->last_record_offset(), reader->offset() - reader->last_record_offset()});
  }
  return entries;
}

}  // namespace shardfeed
