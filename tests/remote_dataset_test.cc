// Datasets in object storage, against real servers on loopback (started and
// stopped here; record/remote/test_servers.h): SeaweedFS (strict SigV4),
// rclone serve s3 (answers Range with 200 + Content-Range) and nginx (plain
// HTTP with Range). Batches read from a bucket are byte-identical to the
// same dataset read from local disk (same seed; planned global and quasi
// shuffle, in order, streaming over gzip shards, resident cache);
// credentials come from the environment, from a ~/.aws profile (temporary
// HOME) and from the container endpoint with a session token; a wrong secret
// is PERMISSION_DENIED naming the server's reason and never the secret.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "converter/convert.h"
#include "gtest/gtest.h"
#include "reader/dataset.h"
#include "reader/loader.h"
#include "record/file.h"
#include "record/remote/object_store.h"
#include "record/remote/remote_files.h"
#include "record/remote/test_servers.h"
#include "record/storage.h"
#include "record/test_util.h"
#include "tests/remote_test_util.h"

namespace shardfeed {
namespace {

using testing::kTestAccessKey;
using testing::kTestSecretKey;
using testing::ReadBatchBytes;

class RemoteDatasetTest : public testing::SeaweedSuite {};

TEST_F(RemoteDatasetTest, FolderIsListedLikeALocalOne) {
  auto remote = Dataset::Open({"s3://data/ds/"});
  ASSERT_TRUE(remote.ok()) << remote.status();
  auto local = Dataset::Open({local_dir()});
  ASSERT_TRUE(local.ok());
  ASSERT_EQ(remote->shards.size(), local->shards.size());
  for (size_t s = 0; s < local->shards.size(); ++s) {
    EXPECT_EQ(remote->shards[s].records, local->shards[s].records);
    EXPECT_EQ(remote->shards[s].index, local->shards[s].index);
  }
  auto glob = Dataset::Open({"s3://data/ds/part-[12].tfrecord"});
  ASSERT_TRUE(glob.ok()) << glob.status();
  EXPECT_EQ(glob->shards.size(), 2u);
  EXPECT_EQ(glob->shards[0].path, "s3://data/ds/part-1.tfrecord");
}

TEST_F(RemoteDatasetTest, BatchesAreByteIdenticalToLocalOnEveryPath) {
  int k = 0;
  for (const LoaderOptions& o : testing::EveryLoaderPath()) {
    SCOPED_TRACE(absl::StrCat("path ", k++));
    auto local = ReadBatchBytes({local_dir()}, o);
    ASSERT_TRUE(local.ok()) << local.status();
    auto remote = ReadBatchBytes({"s3://data/ds/"}, o);
    ASSERT_TRUE(remote.ok()) << remote.status();
    ASSERT_EQ(local->size(), remote->size());
    EXPECT_TRUE(*local == *remote);
  }
}

TEST_F(RemoteDatasetTest, GzipShardsStreamIdentically) {
  LoaderOptions o = testing::EveryLoaderPath()[1];
  auto local = ReadBatchBytes({gzip_dir()}, o);
  ASSERT_TRUE(local.ok()) << local.status();
  auto remote = ReadBatchBytes({"s3://data/gz/"}, o);
  ASSERT_TRUE(remote.ok()) << remote.status();
  ASSERT_EQ(local->size(), remote->size());
  EXPECT_TRUE(*local == *remote);
}

TEST_F(RemoteDatasetTest, WrongSecretIsPermissionDenied) {
  setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
  remote::ForgetStores();
  auto ds = Dataset::Open({"s3://data/ds/"});
  ASSERT_FALSE(ds.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(ds.status())) << ds.status();
  EXPECT_NE(ds.status().message().find("SignatureDoesNotMatch"), std::string::npos) << ds.status()
      << ds.status();
  EXPECT_EQ(ds.status().message().find("not-the-secret"), std::string::npos);
}

TEST_F(RemoteDatasetTest, MissingObjectIsNotFound) {
  auto ds = Dataset::Open({"s3://data/ds/absent.tfrecord"});
  ASSERT_FALSE(ds.ok());
  EXPECT_TRUE(absl::IsNotFound(ds.status())) << ds.status();
  auto source = OpenSource("s3://data/ds/absent.tfrecord");
  EXPECT_TRUE(absl::IsNotFound(source.status())) << source.status();
}

TEST_F(RemoteDatasetTest, KeysFromAnAwsProfileInHome) {
  const std::string home = testing::MakeTempDir();
  ::mkdir((home + "/.aws").c_str(), 0700);
  ASSERT_TRUE(WriteFileAtomically(home + "/.aws/credentials",
                                  absl::StrCat("[default]\naws_access_key_id = wrong\n"
                                               "aws_secret_access_key = wrong\n\n[dev]\n"
                                               "aws_access_key_id = ", kTestAccessKey,
                                               "\naws_secret_access_key = ", kTestSecretKey, "\n"))
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(home + "/.aws/config",
                                  absl::StrCat("[profile dev]\nregion = us-east-1\n"
                                               "endpoint_url = ", endpoint(), "\n"))
                  .ok());
  const std::string old_home = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("HOME", home.c_str(), 1);
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_ENDPOINT_URL");
  setenv("AWS_PROFILE", "dev", 1);
  remote::ForgetStores();
  auto ds = Dataset::Open({"s3://data/ds/"});
  EXPECT_TRUE(ds.ok()) << ds.status();
  // The default profile's keys are wrong: the profile named is the one used.
  setenv("AWS_PROFILE", "default", 1);
  setenv("AWS_ENDPOINT_URL", endpoint().c_str(), 1);
  remote::ForgetStores();
  auto denied = Dataset::Open({"s3://data/ds/"});
  EXPECT_TRUE(absl::IsPermissionDenied(denied.status())) << denied.status();
  setenv("HOME", old_home.c_str(), 1);
}

TEST_F(RemoteDatasetTest, AnObjectReplacedAfterOpeningIsAnError) {
  ASSERT_TRUE(WriteFileAtomically("s3://data/tmp/obj", std::string(1000, 'a')).ok());
  auto source = OpenSource("s3://data/tmp/obj");
  ASSERT_TRUE(source.ok()) << source.status();
  char buf[10];
  ASSERT_EQ(*(*source)->ReadAt(5, buf, 10), 10u);
  ASSERT_TRUE(WriteFileAtomically("s3://data/tmp/obj", std::string(1000, 'b')).ok());
  auto read = (*source)->ReadAt(5, buf, 10);
  ASSERT_FALSE(read.ok()) << "read bytes of the new version: " << std::string(buf, 10);
  EXPECT_TRUE(absl::IsFailedPrecondition(read.status())) << read.status();
  EXPECT_NE(read.status().message().find("s3://data/tmp/obj"), std::string::npos) << read.status();
}

TEST_F(RemoteDatasetTest, RangeReadsAtTheEnd) {
  ASSERT_TRUE(WriteFileAtomically("s3://data/tmp/ten", "0123456789").ok());
  auto source = OpenSource("s3://data/tmp/ten");
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->size(), 10u);
  char buf[8];
  auto n = (*source)->ReadAt(6, buf, 8);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(std::string(buf, *n), "6789");
  EXPECT_EQ(*(*source)->ReadAt(10, buf, 8), 0u);
}

// convert tfrecord --input s3://... reads each shard once, in large ranges
// (it used to ask for every record, in shuffled order, with its own range
// request), and writes the same shards as from the local copy.
TEST_F(RemoteDatasetTest, ConvertReadsARemoteInputInLargeRanges) {
  ConvertOptions o;
  o.type = "tfrecord";
  o.num_shards = 2;
  o.seed = 3;
  o.input = local_dir();
  const std::string local_out = testing::MakeTempDir() + "/from-local";
  const std::string s3_out = testing::MakeTempDir() + "/from-s3";
  o.output_dir = local_out;
  auto local = Convert(o);
  ASSERT_TRUE(local.ok()) << local.status();
  const remote::RemoteTraffic before = remote::RemoteTrafficSoFar();
  o.input = "s3://data/ds/";
  o.output_dir = s3_out;
  auto from_s3 = Convert(o);
  ASSERT_TRUE(from_s3.ok()) << from_s3.status();
  const int64_t requests = remote::RemoteTrafficSoFar().requests - before.requests;
  // 4 shards (+ their indexes) of 500 records: listing, HEADs and one range
  // per shard; far fewer than the 500 records.
  EXPECT_LT(requests, 40) << requests << " requests to convert " << testing::kTestRecords
                          << " records";
  for (const std::string& shard : {"train-00000-of-00002.tfrecord",
                                   "train-00001-of-00002.tfrecord"}) {
    auto a = ReadFileToString(local_out + "/" + shard);
    auto b = ReadFileToString(s3_out + "/" + shard);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_TRUE(*a == *b) << shard;
  }
}

// rclone answers a Range request with 200 + Content-Range: the same batches.
TEST_F(RemoteDatasetTest, RcloneServesTheSameBatches) {
  const std::string rclone = testing::FindBinary("SHARDFEED_RCLONE", "rclone");
  if (rclone.empty()) {
    if (testing::ServersRequired()) FAIL() << "rclone (SHARDFEED_RCLONE) is required in CI";
    GTEST_SKIP() << "no rclone binary";
  }
  const std::string dir = testing::MakeTempDir();
  ::mkdir((dir + "/buckets").c_str(), 0755);
  ::mkdir((dir + "/buckets/data").c_str(), 0755);
  ::mkdir((dir + "/buckets/data/ds").c_str(), 0755);
  testing::WriteRemoteTestDataset(dir + "/buckets/data/ds", 4, false);
  auto server = testing::StartRcloneS3(rclone, dir + "/buckets", kTestAccessKey, kTestSecretKey);
  ASSERT_TRUE(server.ok()) << server.status();
  testing::UseEnvironmentKeys(server->endpoint);
  for (const LoaderOptions& o : {testing::EveryLoaderPath()[0], testing::EveryLoaderPath()[3]}) {
    auto local = ReadBatchBytes({local_dir()}, o);
    ASSERT_TRUE(local.ok()) << local.status();
    auto remote = ReadBatchBytes({"s3://data/ds/"}, o);
    ASSERT_TRUE(remote.ok()) << remote.status();
    EXPECT_TRUE(*local == *remote);
  }
}

// Plain HTTP (nginx, Range): shards given by URL, their .index beside them.
TEST_F(RemoteDatasetTest, NginxServesShardsByUrl) {
  const std::string nginx = testing::FindBinary("SHARDFEED_NGINX", "nginx");
  if (nginx.empty()) {
    if (testing::ServersRequired()) FAIL() << "nginx is required in CI";
    GTEST_SKIP() << "no nginx binary";
  }
  const std::string work = testing::MakeTempDir();
  auto server = testing::StartNginx(nginx, local_dir(), work);
  ASSERT_TRUE(server.ok()) << server.status();
  std::vector<std::string> urls;
  for (int s = 0; s < 4; ++s) urls.push_back(absl::StrCat(server->endpoint, "/part-", s, ".tfrecord"));
  for (const LoaderOptions& o : {testing::EveryLoaderPath()[0], testing::EveryLoaderPath()[1]}) {
    auto local = ReadBatchBytes({local_dir()}, o);
    ASSERT_TRUE(local.ok()) << local.status();
    auto remote = ReadBatchBytes(urls, o);
    ASSERT_TRUE(remote.ok()) << remote.status();
    EXPECT_TRUE(*local == *remote);
  }
  auto listed = Dataset::Open({server->endpoint + "/"});
  EXPECT_FALSE(listed.ok());
}

}  // namespace
}  // namespace shardfeed
