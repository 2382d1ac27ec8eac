// Checks a Loader's feature spec against the features the dataset has, once,
// before any batch, so that a typo is a spec error at construction and never
// a per-record DATA_LOSS later (which skip_corrupt would turn into skipped
// records, or an epoch of empty batches).
//
// What the dataset has: its manifest's schema; without a manifest, the
// features of one sampled record (the first record of the first shard that
// has records). A spec name the dataset does not have is INVALID_ARGUMENT
// listing the names it has and the closest one ("did you mean 'image'?").
// With a manifest, the kind must match too (bytes / int64 / float, as the
// spec reads it from the wire) and so must a fixed length the manifest
// declares. Without a manifest, a feature with a default may be absent from
// the sampled record (it may be optional), and a sample that cannot be read
// (I/O error, corrupt record) checks nothing: the reading path reports it
// with its file and offset.
//
// Thread-compatible; reads at most one record (one buffered read).
#ifndef SHARDFEED_READER_FEATURE_NAMES_H_
#define SHARDFEED_READER_FEATURE_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "reader/dataset.h"
#include "reader/feature_spec.h"

namespace shardfeed {

absl::Status CheckFeatureNames(const Dataset& dataset, const std::vector<FeatureSpec>& spec);

// The name of `names` nearest to `name` (edit distance, ties: the first);
// "" when `names` is empty.
std::string ClosestName(absl::string_view name, const std::vector<std::string>& names);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_FEATURE_NAMES_H_
