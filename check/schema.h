// The schema a dataset's records must share: for each feature key, its kind
// and, for fixed-size features, its value count and (for a single raw-tensor
// bytes value) its byte length. Built from a manifest, or inferred from a
// sample of records: a feature whose count (or byte length) is the same in
// every sampled record is taken as fixed-size.
#ifndef SHARDFEED_CHECK_SCHEMA_H_
#define SHARDFEED_CHECK_SCHEMA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/manifest.pb.h"
#include "reader/example_wire.h"

namespace shardfeed {

struct FeatureRule {
  FeatureKind kind = FeatureKind::kNone;
  int64_t count = -1;        // -1: any number of values
  int64_t byte_length = -1;  // -1: any length (bytes features with one value)
};

using Schema = std::map<std::string, FeatureRule, std::less<>>;

Schema SchemaFromManifest(const Manifest& manifest);
// From serialized Examples (the first records of a dataset). Records that are
// not Examples are ignored; an empty result means "nothing to compare".
Schema InferSchema(const std::vector<std::string>& sample);

// What is wrong with one record against `schema` ("" if nothing). A record
// that is not valid Example wire data says so.
std::string SchemaProblem(absl::string_view record, const Schema& schema);

}  // namespace shardfeed

#endif  // SHARDFEED_CHECK_SCHEMA_H_
