// Schema inference for records written from Python (and for merging the
// schemas of several writers' parts): each record's features are folded into
// the dataset's schema. A feature keeps a fixed length, dtype and shape only
// while every record agrees; otherwise it becomes variable-length (length 0,
// no shape). A feature some record lacks is optional, as SchemaInference
// (reader/schema_inference.h) marks it for datasets it reads, so `shardfeed
// check` accepts the records without it. A kind conflict (int64 here, bytes
// there) is an error. A float64 tensor (raw bytes, dtype "float64") keeps
// its dtype when its shape varies: shape [-1] (variable-length float64); a
// float64 feature whose dtype differs between records is an error (its bytes
// would be read as another type).
#ifndef SHARDFEED_CONVERTER_SCHEMA_FOLD_H_
#define SHARDFEED_CONVERTER_SCHEMA_FOLD_H_

#include <vector>

#include "absl/status/status.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

// Folds `seen` into `known` (same name; optional if either is).
// INVALID_ARGUMENT on a kind conflict.
absl::Status FoldFeature(FeatureSchema* known, const FeatureSchema& seen);

// Folds every feature of `seen` (one record's, or one part's schema) into
// `known` by name; new names are appended. Unless `first` (nothing folded
// yet), a feature missing from either side becomes optional.
absl::Status FoldSchema(std::vector<FeatureSchema>* known, const std::vector<FeatureSchema>& seen,
                        bool first);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_SCHEMA_FOLD_H_
