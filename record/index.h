// Index files: beside each shard, SHARD.index holds one text line per record,
// "<offset> <size>\n", where size is the whole framed record (12 + length +
// 4). This is the format of NVIDIA DALI's tfrecord2idx and of the `tfrecord`
// Python package, so their users can use our indexes directly. For a
// compressed shard, offsets are positions in the decompressed stream.
#ifndef SHARDFEED_RECORD_INDEX_H_
#define SHARDFEED_RECORD_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

struct IndexEntry {
  uint64_t offset = 0;
  uint64_t size = 0;  // framed size: kRecordOverhead + data length
  bool operator==(const IndexEntry& o) const { return offset == o.offset && size == o.size; }
};

// "SHARD" → "SHARD.index".
std::string IndexPathFor(absl::string_view shard_path);

// The index file's text for `entries`.
std::string FormatIndex(const std::vector<IndexEntry>& entries);

// Parses index text; INVALID_ARGUMENT naming `path` and the line on a
// malformed line, or on entries that overlap, are out of order, or whose
// offset + size does not fit in 64 bits. Entries are not checked against
// the shard's size (readers must: a stale index may list bytes past its end).
absl::StatusOr<std::vector<IndexEntry>> ParseIndex(absl::string_view text,
                                                   absl::string_view path);

absl::StatusOr<std::vector<IndexEntry>> ReadIndexFile(const std::string& path);

// Writes the index atomically (temporary name, then rename).
absl::Status WriteIndexFile(const std::string& path, const std::vector<IndexEntry>& entries);

// Reads every record of `shard_path`, verifying both CRCs, and returns its
// index. DATA_LOSS with file and offset if the shard is damaged anywhere.
absl::StatusOr<std::vector<IndexEntry>> BuildIndex(const std::string& shard_path);

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_INDEX_H_
