// Pieces of Convert() shared by the single-process run (convert.cc) and a
// conversion task (convert_task.cc), so that both compute the same listing
// order, shard boundaries, names and manifest. Internal to //converter.
#ifndef SHARDFEED_CONVERTER_CONVERT_INTERNAL_H_
#define SHARDFEED_CONVERTER_CONVERT_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/convert.h"
#include "converter/shard_writer.h"
#include "converter/source.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

struct SplitLayout {
  std::vector<std::string> names;     // the source's splits
  std::vector<std::string> prefixes;  // shard name prefix per split
  uint64_t total = 0;                 // records, all splits
};

absl::Status ValidateConvertOptions(const ConvertOptions& o);
absl::StatusOr<SplitLayout> LayoutFor(const ConvertOptions& o, const Source& source);
// The seeded order in which `split`'s n records are written.
std::vector<uint64_t> SplitOrder(const ConvertOptions& o, size_t split, uint64_t n);
int ConvertThreads(const ConvertOptions& o);
// Builds records order[begin, end) of `split` on worker threads and adds
// them to `writer` in order, reporting progress.
absl::Status WriteRecords(const ConvertOptions& o, const Source& source, size_t split,
                          const std::vector<uint64_t>& order, uint64_t begin, uint64_t end,
                          ShardSequenceWriter* writer, ConvertProgress* progress);
// Everything in the manifest but shards, splits and totals.
Manifest ManifestHeader(const ConvertOptions& o, const Source& source);
void AddSplits(const SplitLayout& layout, const Source& source, Manifest* m,
               const std::vector<int64_t>& shards_per_split);

// convert_task.cc: one task's share (o.task_count > 0).
absl::StatusOr<ConvertSummary> ConvertTask(const ConvertOptions& o, const Source& source,
                                           const SplitLayout& layout);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_CONVERT_INTERNAL_H_
