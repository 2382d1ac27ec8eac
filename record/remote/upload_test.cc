// UploadOptions::FromEnvironment: sizes with units, S3's limits enforced
// with messages naming the variable. (Uploads themselves run against real
// servers in tests/bucket_write_test.sh and python/tests/test_writer_bucket.py.)
#include "record/remote/upload.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace shardfeed {
namespace remote {
namespace {

class UploadOptionsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"SHARDFEED_UPLOAD_THRESHOLD", "SHARDFEED_UPLOAD_PART_SIZE",
                          "SHARDFEED_UPLOAD_THREADS"}) {
      ::unsetenv(v);
    }
  }
};

TEST_F(UploadOptionsTest, Defaults) {
  absl::StatusOr<UploadOptions> o = UploadOptions::FromEnvironment();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->multipart_threshold, 32ull << 20);
  EXPECT_EQ(o->part_size, 16ull << 20);
  EXPECT_EQ(o->threads, 4);
}

TEST_F(UploadOptionsTest, SizesWithUnits) {
  ::setenv("SHARDFEED_UPLOAD_THRESHOLD", "1MiB", 1);
  ::setenv("SHARDFEED_UPLOAD_PART_SIZE", " 5 MiB ", 1);
  ::setenv("SHARDFEED_UPLOAD_THREADS", "2", 1);
  absl::StatusOr<UploadOptions> o = UploadOptions::FromEnvironment();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->multipart_threshold, 1ull << 20);
  EXPECT_EQ(o->part_size, 5ull << 20);
  EXPECT_EQ(o->threads, 2);
  ::setenv("SHARDFEED_UPLOAD_THRESHOLD", "0", 1);  // everything multipart
  ::setenv("SHARDFEED_UPLOAD_PART_SIZE", "1GiB", 1);
  o = UploadOptions::FromEnvironment();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->multipart_threshold, 0u);
  EXPECT_EQ(o->part_size, 1ull << 30);
}

TEST_F(UploadOptionsTest, S3LimitsAndBadValuesAreRefused) {
  struct Case {
    const char* name;
    const char* value;
    const char* message;
  };
  for (const Case& c : {Case{"SHARDFEED_UPLOAD_PART_SIZE", "4MiB", "between 5 MiB and 5 GiB"},
                        Case{"SHARDFEED_UPLOAD_PART_SIZE", "6GiB", "between 5 MiB and 5 GiB"},
                        Case{"SHARDFEED_UPLOAD_THRESHOLD", "6GiB", "at most 5 GiB"},
                        Case{"SHARDFEED_UPLOAD_THRESHOLD", "16MB", "is not a size"},
                        Case{"SHARDFEED_UPLOAD_THRESHOLD", "-1", "is not a size"},
                        Case{"SHARDFEED_UPLOAD_THREADS", "0", "a number from 1 to 64"}}) {
    ::setenv(c.name, c.value, 1);
    absl::StatusOr<UploadOptions> o = UploadOptions::FromEnvironment();
    EXPECT_TRUE(absl::IsInvalidArgument(o.status())) << c.name << "=" << c.value;
    EXPECT_NE(o.status().message().find(c.name), std::string::npos) << o.status();
    EXPECT_NE(o.status().message().find(c.message), std::string::npos) << o.status();
    ::unsetenv(c.name);
  }
}

}  // namespace
}  // namespace remote
}  // namespace shardfeed
