// Option resolution: the one place LoaderOptions are checked and completed
// for every reading path (planned, streaming, resident). Reads at most one
// record (CheckFeatureNames' sample, for a dataset without a manifest);
// errors are INVALID_ARGUMENT saying which option is wrong and how.
#ifndef SHARDFEED_READER_LOADER_OPTIONS_H_
#define SHARDFEED_READER_LOADER_OPTIONS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "reader/dataset.h"
#include "reader/loader.h"

namespace shardfeed {

struct ResolvedOptions {
  LoaderOptions o;                  // features filled in, thread counts >= 1
  ShuffleMode mode = ShuffleMode::kGlobal;  // kSequential when !o.shuffle
  std::vector<int> transform_of;    // per feature: index into o.transforms, or -1
  std::vector<int64_t> shard_start; // per shard: dataset position of its first record
  int64_t total_records = 0;
  // Of the dataset and the options that shape the order (LoaderState).
  uint64_t fingerprint = 0;
  // For the user: default features left out or delivered otherwise than
  // the manifest suggests, and why (SpecFromManifest).
  std::vector<std::string> notes;
};

// Checks `options` against `dataset`: features (default: the manifest's
// schema; every name one the dataset has, reader/feature_names.h), batch size, prefetch, rank/world, transforms, feature shapes (no
// negative dimension) and one slot's size (overflow-safe, at most 1 TiB),
// and epochs = 0 with an epoch that yields no batch (it would never deliver
// anything). The
// reading path checks a `resume` state (CheckResume).
absl::StatusOr<ResolvedOptions> ResolveOptions(const Dataset& dataset,
                                               const LoaderOptions& options);

// Batches one rank gets from `records` records.
int64_t BatchesFor(int64_t records, int64_t batch_size, bool drop_remainder);

// The order fingerprint of a dataset and options (see LoaderState).
uint64_t OrderFingerprint(const Dataset& dataset, const LoaderOptions& o, ShuffleMode mode);

// The fingerprint of one reading path ("planned", "streaming", "resident":
// their orders differ).
uint64_t PathFingerprint(const ResolvedOptions& r, absl::string_view path);

// OK when r.o.resume (if any) is a state of this dataset, these options and
// `path_fingerprint`; INVALID_ARGUMENT saying what differs.
absl::Status CheckResume(const ResolvedOptions& r, uint64_t path_fingerprint);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_LOADER_OPTIONS_H_
