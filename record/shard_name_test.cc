#include "record/shard_name.h"

#include "gtest/gtest.h"

namespace shardfeed {
namespace {

TEST(ShardName, TensorFlowNamingWithOrWithoutExtension) {
  // ImageNet's layout has no extension; the old rule wanted ".tfrecord".
  EXPECT_TRUE(IsShardName("train-00000-of-01024"));
  EXPECT_TRUE(IsShardName("validation-00127-of-00128"));
  EXPECT_TRUE(IsShardName("train-00000-of-00004.tfrecord"));
  EXPECT_TRUE(IsShardName("train-00000-of-00004.tfrecord.gz"));
  EXPECT_TRUE(IsShardName("data.tfrecords"));
  EXPECT_TRUE(IsShardName("my-data-00001-of-00010.gz"));
  EXPECT_EQ("train", TfShardPrefix("train-00000-of-01024"));
  EXPECT_EQ("my-data", TfShardPrefix("my-data-00001-of-00010.gz"));
}

TEST(ShardName, NotShards) {
  EXPECT_FALSE(IsShardName("train-00000-of-00004.tfrecord.index"));
  EXPECT_FALSE(IsShardName("train-00000-of-01024.index"));
  EXPECT_FALSE(IsShardName("manifest.json"));
  EXPECT_FALSE(IsShardName(".train-00000.partial-12.tmp-3"));
  EXPECT_FALSE(IsShardName("README.md"));
  EXPECT_FALSE(IsShardName("train-x-of-00004"));
  EXPECT_FALSE(IsShardName("-00000-of-00004"));
  EXPECT_EQ("", TfShardPrefix("train-00000-of-"));
  EXPECT_EQ("", TfShardPrefix("train-00000of-00001"));
}

TEST(ShardName, Paths) {
  EXPECT_EQ("c.tfrecord", BaseName("a/b/c.tfrecord"));
  EXPECT_EQ("c", BaseName("c"));
  EXPECT_EQ("a/b", DirName("a/b/c"));
  EXPECT_EQ(".", DirName("c"));
  EXPECT_EQ("/", DirName("/c"));
}

}  // namespace
}  // namespace shardfeed
