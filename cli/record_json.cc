#include "cli/record_json.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace shardfeed::cli {
namespace {

bool HasUnknown(const google::protobuf::Message& m) {
  return !m.GetReflection()->GetUnknownFields(m).empty();
}

// Walks Example → Features → each Feature and its value list explicitly
// (no reflection over the map field, which is also faster).
bool HasUnknownFields(const Example& example) {
  if (HasUnknown(example) || HasUnknown(example.features())) return true;
  for (const auto& [key, feature] : example.features().feature()) {
    if (HasUnknown(feature)) return true;
    if (feature.has_bytes_list() && HasUnknown(feature.bytes_list())) return true;
    if (feature.has_float_list() && HasUnknown(feature.float_list())) return true;
    if (feature.has_int64_list() && HasUnknown(feature.int64_list())) return true;
  }
  return false;
}

}  // namespace

bool ParseStrictExample(absl::string_view record, Example* example) {
  if (!example->ParseFromArray(record.data(), static_cast<int>(record.size()))) return false;
  return !HasUnknownFields(*example);
}

std::string RecordToJson(absl::string_view record, bool raw) {
  if (!raw) {
    Example example;
    if (ParseStrictExample(record, &example)) {
      std::string json;
      google::protobuf::util::JsonPrintOptions options;
      options.add_whitespace = false;
      if (google::protobuf::util::MessageToJsonString(example, &json, options).ok()) {
        return json;
      }
    }
  }
  return absl::StrCat("\"", absl::Base64Escape(record), "\"");
}

}  // namespace shardfeed::cli
