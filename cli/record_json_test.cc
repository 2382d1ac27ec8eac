#include "cli/record_json.h"

#include "gtest/gtest.h"

namespace shardfeed::cli {
namespace {

TEST(RecordJson, ExampleUsesCanonicalJsonMapping) {
  Example ex;
  auto& f = *ex.mutable_features()->mutable_feature();
  f["label"].mutable_int64_list()->add_value(7);
  f["name"].mutable_bytes_list()->add_value("AB");
  std::string json = RecordToJson(ex.SerializeAsString(), /*raw=*/false);
  EXPECT_NE(std::string::npos, json.find("\"label\":{\"int64List\":{\"value\":[\"7\"]}}"))
      << json;
  EXPECT_NE(std::string::npos, json.find("\"bytesList\":{\"value\":[\"QUI=\"]}")) << json;
}

TEST(RecordJson, RawAndNonExamplesAreBase64) {
  EXPECT_EQ("\"aGVsbG8gd29ybGQ=\"", RecordToJson("hello world", false));
  Example ex;
  (*ex.mutable_features()->mutable_feature())["x"].mutable_float_list()->add_value(1);
  EXPECT_EQ(0u, RecordToJson(ex.SerializeAsString(), true).find("\""));
}

TEST(RecordJson, UnknownFieldsAreNotAnExample) {
  Example ex;
  std::string bytes = ex.SerializeAsString() + std::string("\x10\x01", 2);  // field 2 varint
  Example parsed;
  EXPECT_FALSE(ParseStrictExample(bytes, &parsed));
  EXPECT_TRUE(ParseStrictExample("", &parsed));
}

}  // namespace
}  // namespace shardfeed::cli

namespace shardfeed::cli {
namespace {

TEST(RecordJson, UnknownFieldsInsideAFeatureAreNotAnExample) {
  Example ex;
  (*ex.mutable_features()->mutable_feature())["k"].mutable_int64_list()->add_value(1);
  Example parsed;
  ASSERT_TRUE(ParseStrictExample(ex.SerializeAsString(), &parsed));
  // Append field 9 (varint) to the Feature inside the map entry by
  // re-encoding: Feature{int64_list{1}} + unknown field.
  Feature f;
  f.mutable_int64_list()->add_value(1);
  std::string feature = f.SerializeAsString() + std::string("\x48\x01", 2);
  std::string entry = std::string("\x0a\x01k\x12", 4) + static_cast<char>(feature.size()) + feature;
  std::string features = std::string("\x0a", 1) + static_cast<char>(entry.size()) + entry;
  std::string example = std::string("\x0a", 1) + static_cast<char>(features.size()) + features;
  EXPECT_FALSE(ParseStrictExample(example, &parsed));
}

}  // namespace
}  // namespace shardfeed::cli

namespace shardfeed::cli {
namespace {

// Printed as base64 before: `cat` showed SequenceExamples as opaque bytes.
TEST(RecordJson, SequenceExampleIsJsonWithContextAndFeatureLists) {
  SequenceExample s;
  (*s.mutable_context()->mutable_feature())["length"].mutable_int64_list()->add_value(2);
  auto& frames = (*s.mutable_feature_lists()->mutable_feature_list())["frames"];
  frames.add_feature()->mutable_float_list()->add_value(0.5f);
  frames.add_feature()->mutable_float_list()->add_value(1.5f);
  const std::string json = RecordToJson(s.SerializeAsString(), /*raw=*/false);
  EXPECT_EQ(
      R"({"context":{"feature":{"length":{"int64List":{"value":["2"]}}}},)"
      R"("featureLists":{"featureList":{"frames":{"feature":[{"floatList":{"value":[0.5]}},)"
      R"({"floatList":{"value":[1.5]}}]}}}})",
      json);
  // Unknown fields inside a FeatureList: not taken for a SequenceExample.
  std::string bad = s.SerializeAsString() + std::string("\x18\x01", 2);  // field 3 varint
  EXPECT_EQ('"', RecordToJson(bad, false)[0]);
}

}  // namespace
}  // namespace shardfeed::cli
