// Every real TFRecord file in testdata/interop/ (written by TensorFlow,
// Apache Beam, a JavaScript library, the gzip tool) reads with exactly the
// record counts and contents listed in testdata/interop/README.md.
#include <string>
#include <vector>

#include "cli/record_json.h"
#include "gtest/gtest.h"
#include "proto/example.pb.h"
#include "record/record_reader.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

using testing::ReadAllRecords;
using testing::RunfilePath;

std::vector<std::string> Records(const std::string& name) {
  auto got = ReadAllRecords(RunfilePath("testdata/interop/" + name));
  EXPECT_TRUE(got.ok()) << name << ": " << got.status();
  return got.ok() ? *got : std::vector<std::string>{};
}

std::vector<Example> Examples(const std::string& name) {
  std::vector<Example> out;
  for (const std::string& r : Records(name)) {
    Example ex;
    EXPECT_TRUE(cli::ParseStrictExample(r, &ex)) << name;
    out.push_back(ex);
  }
  return out;
}

const Feature& Get(const Example& ex, const std::string& key) {
  static const Feature kEmpty;
  auto it = ex.features().feature().find(key);
  EXPECT_NE(it, ex.features().feature().end()) << "missing feature " << key;
  return it == ex.features().feature().end() ? kEmpty : it->second;
}

TEST(Interop, PwnallSinglesAtKnownOffsets) {
  auto reader = RecordReader::Open(RunfilePath("testdata/interop/pwnall_singles.tfrecords"));
  ASSERT_TRUE(reader.ok());
  std::vector<uint64_t> offsets;
  std::vector<Example> ex;
  absl::string_view r;
  while ((*reader)->ReadRecord(&r).ok()) {
    offsets.push_back((*reader)->last_record_offset());
    ex.emplace_back();
    ASSERT_TRUE(cli::ParseStrictExample(r, &ex.back()));
  }
  EXPECT_EQ((std::vector<uint64_t>{0, 40, 85}), offsets);
  ASSERT_EQ(3u, ex.size());
  EXPECT_EQ(42, Get(ex[0], "int_feature").int64_list().value(0));
  EXPECT_FLOAT_EQ(3.14f, Get(ex[1], "float_feature").float_list().value(0));
  EXPECT_EQ("@ABCD", Get(ex[2], "byte_feature").bytes_list().value(0));
}

TEST(Interop, PwnallData) {
  auto ex = Examples("pwnall_data.tfrecord");
  ASSERT_EQ(1u, ex.size());
  EXPECT_EQ(42, Get(ex[0], "answer").int64_list().value(0));
  EXPECT_FLOAT_EQ(3.14f, Get(ex[0], "pi").float_list().value(0));
  EXPECT_EQ("ABC", Get(ex[0], "name").bytes_list().value(0));
}

TEST(Interop, MagentaRawStrings) {
  auto reader =
      RecordReader::Open(RunfilePath("testdata/interop/magenta_tfrecord_iterator_test.tfrecord"));
  ASSERT_TRUE(reader.ok());
  std::vector<std::string> got;
  std::vector<uint64_t> offsets;
  absl::string_view r;
  while ((*reader)->ReadRecord(&r).ok()) {
    got.emplace_back(r);
    offsets.push_back((*reader)->last_record_offset());
  }
  EXPECT_EQ((std::vector<std::string>{"hello world", "12345", "success"}), got);
  EXPECT_EQ((std::vector<uint64_t>{0, 27, 48}), offsets);
  Example ex;
  for (const auto& s : got) EXPECT_FALSE(cli::ParseStrictExample(s, &ex)) << s;
}

TEST(Interop, MagentaNoteSequencesAreNotExamples) {
  auto records = Records("magenta_notesequences.tfrecord");
  EXPECT_EQ(46u, records.size());
  Example ex;
  for (const auto& r : records) EXPECT_FALSE(cli::ParseStrictExample(r, &ex));
}

TEST(Interop, TfxCifarTiny) {
  auto ex = Examples("tfx_cifar10_test_tiny.tfrecord");
  ASSERT_EQ(100u, ex.size());
  for (const auto& e : ex) {
    const std::string& png = Get(e, "image").bytes_list().value(0);
    EXPECT_EQ("\x89PNG", png.substr(0, 4));
    int64_t label = Get(e, "label").int64_list().value(0);
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 10);
    EXPECT_EQ(1, Get(e, "id").bytes_list().value_size());
  }
}

TEST(Interop, TfxSquad) {
  auto ex = Examples("tfx_squad_v_small.tfrecord");
  ASSERT_EQ(50u, ex.size());
  for (const auto& e : ex) {
    for (const char* key : {"title", "context", "question", "id", "answers/text"}) {
      EXPECT_TRUE(Get(e, key).has_bytes_list()) << key;
    }
    EXPECT_TRUE(Get(e, "answers/answer_start").has_int64_list());
  }
}

TEST(Interop, TfxPenguinGzip) {
  auto ex = Examples("tfx_penguin_eval.tfrecord.gz");
  ASSERT_EQ(100u, ex.size());
  for (const auto& e : ex) {
    EXPECT_TRUE(Get(e, "species").has_int64_list());
    for (const char* key :
         {"culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"}) {
      EXPECT_TRUE(Get(e, key).has_float_list()) << key;
    }
  }
}

TEST(Interop, TfxCsvWithEmptyFeatures) {
  auto ex = Examples("tfx_csv_unlabelled_8of12.tfrecord.gz");
  ASSERT_EQ(205u, ex.size());
  for (const auto& e : ex) {
    EXPECT_EQ(Feature::KIND_NOT_SET, Get(e, "pickup_census_tract").kind_case());
  }
}

TEST(Interop, TfxSequenceExamples) {
  auto records = Records("tfx_sequence_eval.tfrecord.gz");
  ASSERT_EQ(4500u, records.size());
  for (const auto& r : records) {
    SequenceExample se;
    ASSERT_TRUE(se.ParseFromString(r));
  }
}

TEST(Interop, GzipToolHeaderWithFileName) {
  std::string bytes = testing::ReadBytes(RunfilePath("testdata/interop/tfx_tfjs_next_page.tfrecord.gz"));
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_TRUE(bytes[3] & 0x08) << "FNAME flag expected in the gzip header";
  auto ex = Examples("tfx_tfjs_next_page.tfrecord.gz");
  ASSERT_EQ(100u, ex.size());
  for (const auto& e : ex) {
    EXPECT_TRUE(Get(e, "session_index").has_int64_list());
    EXPECT_TRUE(Get(e, "cur_page").has_bytes_list());
    EXPECT_TRUE(Get(e, "label").has_bytes_list());
  }
}

}  // namespace
}  // namespace shardfeed
