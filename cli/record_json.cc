#include "cli/record_json.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace shardfeed::cli {
namespace {

bool HasUnknown(const google::protobuf::Message& m) {
  return !m.GetReflection()->GetUnknownFields(m).empty();
}

// Walks Features → each Feature and its value list explicitly (no
// reflection over the map field, which is also faster).
bool HasUnknownFields(const Feature& feature) {
  return HasUnknown(feature) || (feature.has_bytes_list() && HasUnknown(feature.bytes_list())) ||
         (feature.has_float_list() && HasUnknown(feature.float_list())) ||
         (feature.has_int64_list() && HasUnknown(feature.int64_list()));
}

bool HasUnknownFields(const Features& features) {
  if (HasUnknown(features)) return true;
  for (const auto& [key, feature] : features.feature()) {
    if (HasUnknownFields(feature)) return true;
  }
  return false;
}

bool HasUnknownFields(const Example& example) {
  return HasUnknown(example) || HasUnknownFields(example.features());
}

bool HasUnknownFields(const SequenceExample& s) {
  if (HasUnknown(s) || HasUnknownFields(s.context()) || HasUnknown(s.feature_lists())) {
    return true;
  }
  for (const auto& [key, list] : s.feature_lists().feature_list()) {
    if (HasUnknown(list)) return true;
    for (const Feature& f : list.feature()) {
      if (HasUnknownFields(f)) return true;
    }
  }
  return false;
}

std::string CanonicalJson(const google::protobuf::Message& m) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = false;
  if (!google::protobuf::util::MessageToJsonString(m, &json, options).ok()) return "";
  return json;
}

}  // namespace

bool ParseStrictExample(absl::string_view record, Example* example) {
  if (!example->ParseFromArray(record.data(), static_cast<int>(record.size()))) return false;
  return !HasUnknownFields(*example);
}

bool ParseStrictSequenceExample(absl::string_view record, SequenceExample* sequence) {
  if (!sequence->ParseFromArray(record.data(), static_cast<int>(record.size()))) return false;
  return !HasUnknownFields(*sequence);
}

std::string RecordToJson(absl::string_view record, bool raw) {
  if (!raw) {
    std::string json;
    Example example;
    SequenceExample sequence;
    if (ParseStrictExample(record, &example)) {
      json = CanonicalJson(example);
    } else if (ParseStrictSequenceExample(record, &sequence)) {
      json = CanonicalJson(sequence);
    }
    if (!json.empty()) return json;
  }
  return absl::StrCat("\"", absl::Base64Escape(record), "\"");
}

}  // namespace shardfeed::cli
