#include "record/path_util.h"

#include <string>

#include "gtest/gtest.h"
#include "record/file.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

TEST(PathUtilTest, StripTrailingSlashes) {
  EXPECT_EQ(StripTrailingSlashes("out//"), "out");
  EXPECT_EQ(StripTrailingSlashes("http://127.0.0.1:8333/"), "http://127.0.0.1:8333");
  EXPECT_EQ(StripTrailingSlashes("/"), "/");
  EXPECT_EQ(StripTrailingSlashes(""), "");
}

TEST(PathUtilTest, ReadLocalFile) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(WriteFileAtomically(dir + "/a", std::string("x\0y", 3)).ok());
  auto text = ReadLocalFile(dir + "/a");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, std::string("x\0y", 3));
  ASSERT_TRUE(WriteFileAtomically(dir + "/empty", "").ok());
  EXPECT_EQ(*ReadLocalFile(dir + "/empty"), "");
  auto missing = ReadLocalFile(dir + "/absent");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_NE(missing.status().message().find(dir + "/absent"), std::string::npos);
  auto folder = ReadLocalFile(dir);
  EXPECT_TRUE(absl::IsInvalidArgument(folder.status())) << folder.status();
}

}  // namespace
}  // namespace shardfeed
