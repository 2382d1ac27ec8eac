// Helpers of the remote-dataset tests: a small dataset (local, then
// uploaded), batches read as bytes, the loader paths to compare, and the
// environment that points the client at a loopback server.
#ifndef SHARDFEED_TESTS_REMOTE_TEST_UTIL_H_
#define SHARDFEED_TESTS_REMOTE_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "reader/loader_options.h"
#include "record/remote/test_servers.h"

namespace shardfeed {
namespace testing {

constexpr char kTestAccessKey[] = "AKIDSHARDFEEDTEST";
constexpr char kTestSecretKey[] = "s3cr3t/shardfeed+test";
constexpr int kTestRecords = 500;

// kTestRecords records ("id": int64, "image": bytes) over `shards` shards
// of uneven sizes in `dir`; `gzip`: compressed, without indexes.
void WriteRemoteTestDataset(const std::string& dir, int shards, bool gzip);

// Uploads every file of `dir` to `prefix` ("s3://bucket/folder/").
void UploadFolder(const std::string& dir, const std::string& prefix);

// A loader of `paths` with the test dataset's spec (id, image).
absl::StatusOr<std::unique_ptr<Loader>> OpenTestLoader(const std::vector<std::string>& paths,
                                                       LoaderOptions o);

// Every tensor of `batch`, bytes and all, as one string.
std::string BatchBytes(const Batch& batch);

// Every batch's tensors, bytes and all, in delivery order.
absl::StatusOr<std::vector<std::string>> ReadBatchBytes(const std::vector<std::string>& paths,
                                                        LoaderOptions o);

// Planned global, quasi, in order, streaming, resident cache (2 epochs).
std::vector<LoaderOptions> EveryLoaderPath();

// AWS_ENDPOINT_URL = endpoint, the test keys in AWS_ACCESS_KEY_ID/SECRET,
// no profile, no token, no metadata lookups; the client forgets its stores.
void UseEnvironmentKeys(const std::string& endpoint);

// A test suite with SeaweedFS on loopback (SHARDFEED_WEED), the test
// dataset local (local_dir(): 4 indexed shards; gzip_dir(): 3 gzip shards)
// and uploaded (s3://data/ds/, s3://data/gz/). Each test starts with the
// environment keys pointing at the server. Without the binary: skipped,
// failed under CI.
class SeaweedSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;
  static const std::string& local_dir() { return *local_; }
  static const std::string& gzip_dir() { return *gz_; }
  static const std::string& endpoint() { return server_->endpoint; }

 private:
  static std::string* local_;
  static std::string* gz_;
  static std::string* start_error_;
  static S3Server* server_;
};

}  // namespace testing
}  // namespace shardfeed

#endif  // SHARDFEED_TESTS_REMOTE_TEST_UTIL_H_
