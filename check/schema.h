// The schema a manifest declares, as rules a record must follow: for each
// feature key, its kind, whether it may be missing (FeatureSchema.optional)
// and, for fixed-size features, its value count and (for a single raw-tensor
// bytes value) its byte length. Datasets without a manifest are checked
// against the schema inferred from all their records instead
// (reader/schema_inference.h).
#ifndef SHARDFEED_CHECK_SCHEMA_H_
#define SHARDFEED_CHECK_SCHEMA_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/manifest.pb.h"
#include "reader/example_wire.h"

namespace shardfeed {

struct FeatureRule {
  FeatureKind kind = FeatureKind::kNone;
  bool optional = false;
  int64_t count = -1;        // -1: any number of values
  int64_t byte_length = -1;  // -1: any length (bytes features with one value)
};

using Schema = std::map<std::string, FeatureRule, std::less<>>;

Schema SchemaFromManifest(const Manifest& manifest);

// What is wrong with one record against `schema` ("" if nothing). A record
// that is not valid Example (or SequenceExample) wire data says so.
std::string SchemaProblem(absl::string_view record, const Schema& schema);

}  // namespace shardfeed

#endif  // SHARDFEED_CHECK_SCHEMA_H_
