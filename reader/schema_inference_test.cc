#include "reader/schema_inference.h"

#include "converter/example_encoder.h"
#include "gtest/gtest.h"

namespace shardfeed {
namespace {

std::string Record(const std::string& name, bool weight, int boxes) {
  ExampleEncoder e;
  e.AddBytes("image/filename", name);
  e.AddInt64("label", 1);
  if (weight) e.AddFloatList("weight", {0.5f});
  std::vector<float> b(static_cast<size_t>(boxes), 1.0f);
  e.AddFloatList("bbox", b);
  return e.Finish();
}

const FeatureSchema* Find(const std::vector<FeatureSchema>& s, const std::string& name) {
  for (const auto& f : s) {
    if (f.name() == name) return &f;
  }
  return nullptr;
}

TEST(SchemaInference, OptionalAndVariableLengthFromAllRecords) {
  SchemaInference a, b;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(a.Add(Record("abcdefgh", i % 3 == 0, 4)).ok());
  // A later shard: other filename lengths, more boxes.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(b.Add(Record("x", false, 4 + i)).ok());
  a.Merge(b);
  EXPECT_EQ(120, a.records());
  const std::vector<FeatureSchema> s = a.Schema();
  ASSERT_EQ(4u, s.size());
  const FeatureSchema* weight = Find(s, "weight");
  ASSERT_NE(nullptr, weight);
  EXPECT_TRUE(weight->optional());
  EXPECT_EQ("float", weight->kind());
  EXPECT_EQ(1, weight->length());
  const FeatureSchema* bbox = Find(s, "bbox");
  EXPECT_EQ(0, bbox->length());  // variable
  EXPECT_FALSE(bbox->optional());
  EXPECT_NE(std::string::npos, bbox->description().find("4..23 values"));
  const FeatureSchema* name = Find(s, "image/filename");
  EXPECT_EQ("bytes", name->kind());
  EXPECT_EQ(1, name->length());  // one value, whatever its byte length
  EXPECT_FALSE(a.features().at("label").conflicting());
}

TEST(SchemaInference, KindConflictIsSeenWithItsFirstOffset) {
  SchemaInference s;
  ExampleEncoder e;
  e.AddInt64("label", 3);
  ASSERT_TRUE(s.Add(e.Finish(), 0).ok());
  ASSERT_TRUE(s.Add(e.Finish(), 10).ok());  // an empty Example: label missing
  e.AddInt64("label", 4);
  ASSERT_TRUE(s.Add(e.Finish(), 20).ok());
  e.AddBytes("label", "cat");
  ASSERT_TRUE(s.Add(e.Finish(), 30).ok());
  const FeatureStats& st = s.features().at("label");
  EXPECT_TRUE(st.conflicting());
  EXPECT_EQ(FeatureKind::kInt64, st.kind());
  EXPECT_EQ(30, st.first_offset[static_cast<int>(FeatureKind::kBytes)]);
  EXPECT_EQ(0, st.first_offset[static_cast<int>(FeatureKind::kInt64)]);
  EXPECT_TRUE(s.Schema()[0].optional());
}

TEST(SchemaInference, NotAnExampleAddsNothing) {
  SchemaInference s;
  EXPECT_FALSE(s.Add(std::string("\xff\xff\xff", 3)).ok());
  EXPECT_EQ(0, s.records());
  EXPECT_TRUE(s.Schema().empty());
}

TEST(SchemaInference, SequenceExampleContextAndFeatureLists) {
  // SequenceExample { context = 1 (Features); feature_lists = 2 }.
  ExampleEncoder e;
  e.AddInt64("length", 2);
  std::string record = e.Finish();  // field 1 = Features: the context
  // feature_lists { feature_list { key: "frames" value: {} } }
  const std::string entry = std::string("\x0a\x06", 2) + "frames" + std::string("\x12\x00", 2);
  const std::string lists = std::string("\x0a", 1) + static_cast<char>(entry.size()) + entry;
  record += std::string("\x12", 1) + static_cast<char>(lists.size()) + lists;
  SchemaInference s;
  ASSERT_TRUE(s.Add(record).ok());
  EXPECT_EQ(1u, s.features().count("length"));
  ASSERT_EQ(1u, s.feature_lists().count("frames"));
}

}  // namespace
}  // namespace shardfeed
