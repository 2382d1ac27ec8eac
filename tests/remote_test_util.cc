#include "tests/remote_test_util.h"

#include <sys/stat.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "converter/example_encoder.h"
#include "gtest/gtest.h"
#include "reader/dataset.h"
#include "reader/loader.h"
#include "record/file.h"
#include "record/file_list.h"
#include "record/index.h"
#include "record/record_writer.h"
#include "record/remote/object_store.h"
#include "record/test_util.h"

namespace shardfeed {
namespace testing {
namespace {

std::string MakeRecord(int i) {
  ExampleEncoder e;
  std::string image(64 + i % 50, static_cast<char>(i * 7));
  e.AddInt64("id", i);
  e.AddBytes("image", image);
  return e.Finish();
}

}  // namespace

void WriteRemoteTestDataset(const std::string& dir, int shards, bool gzip) {
  int next = 0;
  for (int s = 0; s < shards; ++s) {
    const int n = s + 1 == shards ? kTestRecords - next : kTestRecords / shards - 7 * s;
    const std::string path = absl::StrCat(dir, "/part-", s, ".tfrecord", gzip ? ".gz" : "");
    RecordWriterOptions o;
    o.compression = gzip ? Compression::kGzip : Compression::kNone;
    auto w = RecordWriter::Create(path, o);
    ASSERT_TRUE(w.ok()) << w.status();
    for (int k = 0; k < n; ++k) ASSERT_TRUE((*w)->WriteRecord(MakeRecord(next++)).ok());
    if (!gzip) {
      ASSERT_TRUE(WriteIndexFile(IndexPathFor(path), (*w)->index()).ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
  }
}

void UploadFolder(const std::string& dir, const std::string& prefix) {
  auto files = ListDir(dir);
  ASSERT_TRUE(files.ok()) << files.status();
  for (const std::string& f : files->files) {
    auto bytes = ReadFileToString(dir + "/" + f);
    ASSERT_TRUE(bytes.ok());
    absl::Status put = WriteFileAtomically(prefix + f, *bytes);
    ASSERT_TRUE(put.ok()) << put;
  }
}

absl::StatusOr<std::unique_ptr<Loader>> OpenTestLoader(const std::vector<std::string>& paths,
                                                       LoaderOptions o) {
  auto ds = Dataset::Open(paths);
  if (!ds.ok()) return ds.status();
  auto spec = ParseSpec("id:int64,image:bytes");
  if (!spec.ok()) return spec.status();
  o.features = *spec;
  return Loader::Create(*std::move(ds), o);
}

std::string BatchBytes(const Batch& batch) {
  std::string bytes;
  for (const Tensor& t : batch.tensors()) {
    absl::StrAppend(&bytes, t.name, ":",
                    absl::string_view(static_cast<const char*>(t.data), t.bytes), ";");
  }
  return bytes;
}

absl::StatusOr<std::vector<std::string>> ReadBatchBytes(const std::vector<std::string>& paths,
                                                        LoaderOptions o) {
  auto loader = OpenTestLoader(paths, o);
  if (!loader.ok()) return loader.status();
  std::vector<std::string> out;
  for (;;) {
    auto batch = (*loader)->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    if (!batch.ok()) return batch.status();
    std::string bytes = BatchBytes(*batch);
    out.push_back(std::move(bytes));
  }
  return out;
}

std::vector<LoaderOptions> EveryLoaderPath() {
  std::vector<LoaderOptions> all;
  LoaderOptions o;
  o.batch_size = 32;
  o.epochs = 2;
  o.seed = 7;
  o.io_threads = 2;
  o.decode_threads = 2;
  o.shuffle_mode = ShuffleMode::kGlobal;
  all.push_back(o);
  o.shuffle_mode = ShuffleMode::kQuasi;
  o.shuffle_buffer = 64;
  all.push_back(o);
  LoaderOptions in_order = o;
  in_order.shuffle = false;
  all.push_back(in_order);
  LoaderOptions streaming = o;
  streaming.force_streaming = true;
  streaming.shuffle_buffer = 100;
  all.push_back(streaming);
  LoaderOptions resident = o;
  resident.shuffle_mode = ShuffleMode::kGlobal;
  resident.cache.enabled = true;
  all.push_back(resident);
  return all;
}

void UseEnvironmentKeys(const std::string& endpoint) {
  setenv("AWS_ENDPOINT_URL", endpoint.c_str(), 1);
  setenv("AWS_ACCESS_KEY_ID", kTestAccessKey, 1);
  setenv("AWS_SECRET_ACCESS_KEY", kTestSecretKey, 1);
  setenv("AWS_REGION", "us-east-1", 1);
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  unsetenv("AWS_SESSION_TOKEN");
  unsetenv("AWS_PROFILE");
  unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  // The extent cache of remote reads (reader/extent_prefetcher.h) in a
  // folder of the test's own.
  static const std::string* cache_dir = new std::string(MakeTempDir());
  setenv("SHARDFEED_CACHE_DIR", cache_dir->c_str(), 1);
  remote::ForgetStores();
}

std::string* SeaweedSuite::local_ = nullptr;
std::string* SeaweedSuite::gz_ = nullptr;
std::string* SeaweedSuite::start_error_ = nullptr;
S3Server* SeaweedSuite::server_ = nullptr;

void SeaweedSuite::SetUpTestSuite() {
  const std::string weed = FindBinary("SHARDFEED_WEED", "weed");
  if (weed.empty()) return;
  const std::string root = MakeTempDir();
  local_ = new std::string(root + "/local");
  gz_ = new std::string(root + "/gz");
  for (const std::string& d : {*local_, *gz_, root + "/weed"}) ::mkdir(d.c_str(), 0755);
  WriteRemoteTestDataset(*local_, 4, false);
  WriteRemoteTestDataset(*gz_, 3, true);
  auto server = StartSeaweedFs(weed, root + "/weed", kTestAccessKey, kTestSecretKey, "data");
  if (!server.ok()) {
    start_error_ = new std::string(server.status().ToString());
    return;
  }
  server_ = new S3Server(*std::move(server));
  UseEnvironmentKeys(server_->endpoint);
  UploadFolder(*local_, "s3://data/ds/");
  UploadFolder(*gz_, "s3://data/gz/");
}

void SeaweedSuite::TearDownTestSuite() {
  delete server_;
  server_ = nullptr;
}

void SeaweedSuite::SetUp() {
  if (local_ == nullptr) {
    if (ServersRequired()) FAIL() << "SeaweedFS (SHARDFEED_WEED) is required in CI";
    GTEST_SKIP() << "no weed binary (SHARDFEED_WEED; tools/setup.sh installs it)";
  }
  ASSERT_EQ(start_error_, nullptr) << *start_error_;
  UseEnvironmentKeys(server_->endpoint);
}

}  // namespace testing
}  // namespace shardfeed
