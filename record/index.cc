#include "record/index.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

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

namespace {

// "<digits> <digits>" exactly, each below 10^19 (no overflow possible):
// what every index writer (ours, DALI's tfrecord2idx) produces. Loading a
// dataset parses one line per record; this is ~10x cheaper than splitting.
// False for anything else, which ParseIndexLine then decides.
bool ParseIndexLineFast(absl::string_view line, IndexEntry* e) {
  const char* p = line.data();
  const char* end = p + line.size();
  uint64_t v[2];
  for (int k = 0; k < 2; ++k) {
    const char* start = p;
    const char* limit = start + std::min<ptrdiff_t>(end - start, 19);
    uint64_t x = 0;
    while (p < limit && static_cast<unsigned char>(*p - '0') < 10) x = x * 10 + (*p++ - '0');
    if (p == start || (p < end && *p >= '0' && *p <= '9')) return false;  // none, or 19+ digits
    v[k] = x;
    if (k == 0) {
      if (p == end || *p != ' ') return false;
      ++p;
    }
  }
  if (p != end) return false;
  e->offset = v[0];
  e->size = v[1];
  return true;
}

// The general form: two unsigned numbers separated by spaces (leading,
// trailing or repeated spaces allowed).
bool ParseIndexLine(absl::string_view line, IndexEntry* e) {
  std::vector<absl::string_view> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
  return parts.size() == 2 && absl::SimpleAtoi(parts[0], &e->offset) &&
         absl::SimpleAtoi(parts[1], &e->size);
}

}  // namespace

absl::StatusOr<std::vector<IndexEntry>> ParseIndex(absl::string_view text,
                                                   absl::string_view path) {
  std::vector<IndexEntry> entries;
  int line_number = 0;
  uint64_t next_offset = 0;
  entries.reserve(text.size() / 16);  // ~16 bytes a line for 100 MB shards
  // Lines found with memchr (absl::StrSplit's iterator cost as much as the
  // numbers: opening a dataset parses one line per record).
  for (const char *p = text.data(), *end = p + text.size(); p < end;) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
    const char* stop = nl != nullptr ? nl : end;
    const absl::string_view line(p, stop - p);
    p = stop + 1;
    ++line_number;
    if (line.empty()) continue;
    IndexEntry e;
    if (!ParseIndexLineFast(line, &e) && !ParseIndexLine(line, &e)) {
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
