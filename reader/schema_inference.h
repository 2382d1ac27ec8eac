// SchemaInference: the feature schema of a dataset, inferred from all its
// records (never from a sample: a guess from the first records of one shard
// flags clean records of another). Shared by `shardfeed check` (datasets
// without a manifest) and `shardfeed convert tfrecord` (the new manifest).
//
// Per feature key: the kind (bytes, float, int64), whether every record holds
// it (else optional), and whether every record holding it has the same
// number of values (else variable-length). Only a key whose kind differs
// between records (bytes here, int64 there) is a conflict. An empty Feature
// (no list at all) counts as missing. A SequenceExample's context features
// are its features; its feature_lists keys are counted apart.
//
// Example:
//   SchemaInference all;
//   for (each shard) { SchemaInference one; for (each record) one.Add(r, off); all.Merge(one); }
//   std::vector<FeatureSchema> schema = all.Schema();
// Thread-compatible: one instance per thread, then Merge.
#ifndef SHARDFEED_READER_SCHEMA_INFERENCE_H_
#define SHARDFEED_READER_SCHEMA_INFERENCE_H_

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/manifest.pb.h"
#include "reader/example_wire.h"

namespace shardfeed {

struct FeatureStats {
  // Records holding the key with each kind (index: FeatureKind; kNone is an
  // empty Feature), and the offset of the first of them (-1: none, or no
  // offsets given).
  std::array<int64_t, 4> records{};
  std::array<int64_t, 4> first_offset{-1, -1, -1, -1};
  // Value counts over the records holding a list.
  int64_t min_values = std::numeric_limits<int64_t>::max();
  int64_t max_values = 0;

  int64_t present() const;  // records holding a list (any kind)
  FeatureKind kind() const;  // the most common kind (ties: bytes, float, int64)
  bool conflicting() const;  // more than one kind
};

class SchemaInference {
 public:
  // Observes one record (at `offset` in its file). INVALID_ARGUMENT, with
  // nothing recorded, if it is not an Example or SequenceExample.
  absl::Status Add(absl::string_view record, int64_t offset = -1);
  // Adds the counts of `other` (first offsets are kept from *this when set).
  void Merge(const SchemaInference& other);

  int64_t records() const { return records_; }
  const std::map<std::string, FeatureStats, std::less<>>& features() const { return features_; }
  // SequenceExample feature_lists keys → records holding them.
  const std::map<std::string, int64_t, std::less<>>& feature_lists() const {
    return feature_lists_;
  }

  // The inferred schema, sorted by name: kind, length (0: variable),
  // optional, and a description of what was seen ("in 40 of 100 records;
  // 1..8 values").
  std::vector<FeatureSchema> Schema() const;

 private:
  int64_t records_ = 0;
  std::map<std::string, FeatureStats, std::less<>> features_;
  std::map<std::string, int64_t, std::less<>> feature_lists_;
};

// One line for a summary: "label  int64  1 value" / "weight  float  1 value,
// optional" / "bbox  float  variable length".
std::string DescribeFeature(const FeatureSchema& f);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_SCHEMA_INFERENCE_H_
