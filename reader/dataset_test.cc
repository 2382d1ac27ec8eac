// Dataset discovery: the shards users actually have (TensorFlow's names
// without extension, globs that match index files and manifests, a shard
// beside its manifest) and split selection.
#include "reader/dataset.h"

#include "absl/strings/str_cat.h"
#include "converter/example_encoder.h"
#include "gtest/gtest.h"
#include "record/index.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

std::vector<std::string> Records(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    ExampleEncoder e;
    e.AddInt64("label", i);
    out.push_back(e.Finish());
  }
  return out;
}

// `name` with n records and its index.
void Shard(const std::string& dir, const std::string& name, int n) {
  const std::string path = absl::StrCat(dir, "/", name);
  testing::WriteRecords(path, Records(n));
  auto index = BuildIndex(path);
  ASSERT_TRUE(index.ok());
  ASSERT_TRUE(WriteIndexFile(IndexPathFor(path), *index).ok());
}

// A converted dataset: train (2 shards: 3 + 4 records) and test (1 shard: 5).
std::string ConvertedDataset(const std::string& splits = "train,test") {
  const std::string dir = testing::MakeTempDir();
  std::string shards;
  auto add = [&](const std::string& split, const std::string& name, int n) {
    Shard(dir, name, n);
    absl::StrAppend(&shards, shards.empty() ? "" : ",", R"({"file":")", name, R"(","split":")",
                    split, R"(","records":)", n, "}");
  };
  if (splits == "train,test") {
    add("train", "train-00000-of-00002.tfrecord", 3);
    add("train", "train-00001-of-00002.tfrecord", 4);
    add("test", "test-00000-of-00001.tfrecord", 5);
  } else {
    add("test", "test-00000-of-00001.tfrecord", 5);
    add("validation", "validation-00000-of-00001.tfrecord", 2);
  }
  testing::WriteBytes(dir + "/manifest.json",
                      absl::StrCat(R"({"features":[{"name":"label","kind":"int64","length":1}],)",
                                   R"("shards":[)", shards, "]}"));
  return dir;
}

TEST(Dataset, TensorFlowShardNamesWithoutExtension) {
  const std::string dir = testing::MakeTempDir();
  Shard(dir, "train-00000-of-00002", 3);
  Shard(dir, "train-00001-of-00002", 4);
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ(2u, ds->shards.size());
  EXPECT_EQ(7, ds->total_records());
}

TEST(Dataset, GlobMatchingIndexFilesAndManifestTakesThemForWhatTheyAre) {
  const std::string dir = ConvertedDataset();
  auto ds = Dataset::Open({dir + "/*"}, "train");
  ASSERT_TRUE(ds.ok()) << ds.status();
  ASSERT_TRUE(ds->manifest.has_value());
  EXPECT_EQ(2u, ds->shards.size());
  EXPECT_EQ(7, ds->total_records());
  // Without a manifest too: the .index files are not shards.
  const std::string bare = testing::MakeTempDir();
  Shard(bare, "a.tfrecord", 2);
  auto loose = Dataset::Open({bare + "/*"});
  ASSERT_TRUE(loose.ok()) << loose.status();
  EXPECT_EQ(1u, loose->shards.size());
}

TEST(Dataset, ShardPathUsesTheManifestBesideIt) {
  const std::string dir = ConvertedDataset();
  auto ds = Dataset::Open({dir + "/train-00001-of-00002.tfrecord"});
  ASSERT_TRUE(ds.ok()) << ds.status();
  ASSERT_TRUE(ds->manifest.has_value());  // its schema is the feature spec
  ASSERT_EQ(1u, ds->shards.size());
  EXPECT_EQ(4, ds->total_records());
  EXPECT_TRUE(ds->notes.empty());
}

TEST(Dataset, SeveralSplitsWithoutSplitReadTrainAndSaySo) {
  const std::string dir = ConvertedDataset();
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ("train", ds->split);
  EXPECT_EQ(7, ds->total_records());  // not 12: test is not mixed in
  ASSERT_EQ(1u, ds->notes.size());
  EXPECT_NE(std::string::npos, ds->notes[0].find("reading 'train'")) << ds->notes[0];
  auto test = Dataset::Open({dir + "/manifest.json"}, "test");
  ASSERT_TRUE(test.ok());
  EXPECT_EQ(5, test->total_records());
}

TEST(Dataset, SeveralSplitsWithoutTrainAskForOne) {
  auto ds = Dataset::Open({ConvertedDataset("test,validation")});
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, ds.status().code());
  EXPECT_NE(std::string::npos, ds.status().message().find("test, validation")) << ds.status();
}

TEST(Dataset, SplitWithoutManifestSelectsByNameOrIsRefused) {
  const std::string dir = testing::MakeTempDir();
  Shard(dir, "train-00000-of-00001", 3);
  Shard(dir, "test-00000-of-00001", 5);
  auto train = Dataset::Open({dir}, "train");
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(3, train->total_records());
  auto test = Dataset::Open({dir + "/*"}, "test");
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(5, test->total_records());
  auto none = Dataset::Open({dir}, "validation");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(std::string::npos, none.status().message().find("'validation-*'")) << none.status();
  // A folder of train and test shards without split: train, said.
  auto dflt = Dataset::Open({dir});
  ASSERT_TRUE(dflt.ok()) << dflt.status();
  EXPECT_EQ(3, dflt->total_records());
  EXPECT_EQ(1u, dflt->notes.size());
  // Shards named by the user, one by one or by a glob, are read as given.
  auto both = Dataset::Open({dir + "/train-00000-of-00001", dir + "/test-00000-of-00001"});
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(8, both->total_records());
  EXPECT_TRUE(both->notes.empty());
  auto glob = Dataset::Open({dir + "/*-of-*"});
  ASSERT_TRUE(glob.ok()) << glob.status();
  EXPECT_EQ(8, glob->total_records());
}

TEST(Dataset, ExplicitIndexFileIsNotAShard) {
  const std::string dir = testing::MakeTempDir();
  Shard(dir, "a.tfrecord", 2);
  auto ds = Dataset::Open({dir + "/a.tfrecord.index"});
  ASSERT_FALSE(ds.ok());
  EXPECT_NE(std::string::npos, ds.status().message().find("an index file")) << ds.status();
}

}  // namespace
}  // namespace shardfeed
