// Remote shards on the planned path: opens the extent cache that
// LoaderOptions::remote names, checks its limit against the plan up front
// and serves every remote shard of `files` through the extent prefetcher
// (reader/extent_prefetcher.h, extent_source.h).
//
// Limits (INVALID_ARGUMENT, saying which limit would work): with global
// shuffle every extent is read all through the epoch, so the cache must hold
// the remote dataset whole (a smaller one would fetch each extent about
// once per record it holds, the per-record requests this design avoids):
// the message suggests shuffle="quasi" or that cache_limit. Otherwise the
// limit must hold the extents of `workers` + 1 consecutive batches and one
// more being fetched (ExtentPlan::WorkingSetBytes).
#ifndef SHARDFEED_READER_EXTENT_READING_H_
#define SHARDFEED_READER_EXTENT_READING_H_

#include <memory>

#include "absl/status/statusor.h"
#include "reader/batch_filler.h"
#include "reader/extent_plan.h"
#include "reader/extent_prefetcher.h"
#include "reader/loader_options.h"

namespace shardfeed {

// Null when `files` has no remote shard.
absl::StatusOr<std::shared_ptr<ExtentPrefetcher>> StartExtentReading(
    const ResolvedOptions& r, std::shared_ptr<ExtentPlan> plan, int workers, ShardFiles* files);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_EXTENT_READING_H_
