#include "cli/record_json.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace shardfeed::cli {
namespace {

bool HasUnknownFields(const google::protobuf::Message& message) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  if (!reflection->GetUnknownFields(message).empty()) return true;
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const auto* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        if (HasUnknownFields(reflection->GetRepeatedMessage(message, field, i))) return true;
      }
    } else if (HasUnknownFields(reflection->GetMessage(message, field))) {
      return true;
    }
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
