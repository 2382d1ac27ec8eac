// Helpers of the remote-dataset tests: a small dataset (local, then
// uploaded), batches read as bytes, the loader paths to compare, and the
// environment that points the client at a loopback server.
#ifndef SHARDFEED_TESTS_REMOTE_TEST_UTIL_H_
#define SHARDFEED_TESTS_REMOTE_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reader/loader_options.h"

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

// Every batch's tensors, bytes and all, in delivery order.
absl::StatusOr<std::vector<std::string>> ReadBatchBytes(const std::vector<std::string>& paths,
                                                        LoaderOptions o);

// Planned global, quasi, in order, streaming, resident cache (2 epochs).
std::vector<LoaderOptions> EveryLoaderPath();

// AWS_ENDPOINT_URL = endpoint, the test keys in AWS_ACCESS_KEY_ID/SECRET,
// no profile, no token, no metadata lookups; the client forgets its stores.
void UseEnvironmentKeys(const std::string& endpoint);

}  // namespace testing
}  // namespace shardfeed

#endif  // SHARDFEED_TESTS_REMOTE_TEST_UTIL_H_
