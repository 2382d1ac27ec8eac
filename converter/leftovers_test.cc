#include "converter/leftovers.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace shardfeed {
namespace {

// The id of a process that has exited (and been reaped).
std::string DeadPid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return absl::StrCat(pid);
}

TEST(LeftoversTest, ConvertsOwnTemporariesOfGoneProcesses) {
  const std::string dead = DeadPid();
  const std::vector<std::string> prefixes = {"train", "test"};
  EXPECT_TRUE(IsConvertLeftover(absl::StrCat(".train-00003.partial-", dead), prefixes));
  EXPECT_TRUE(IsConvertLeftover(absl::StrCat(".test-00000.partial-", dead, ".tmp-", dead, "-7"),
                                prefixes));
  EXPECT_TRUE(IsConvertLeftover(
      absl::StrCat("train-00000-of-00002.tfrecord.gz.index.tmp-", dead, "-1"), prefixes));
  EXPECT_TRUE(IsConvertLeftover(absl::StrCat("manifest.json.tmp-", dead, "-0"), prefixes));
}

TEST(LeftoversTest, NeverAnotherRunsOrAUsersFile) {
  const std::string dead = DeadPid();
  const std::string live = absl::StrCat(::getpid());
  const std::vector<std::string> prefixes = {"train"};
  EXPECT_FALSE(IsConvertLeftover(absl::StrCat(".train-00000.partial-", live), prefixes));
  EXPECT_FALSE(IsConvertLeftover(absl::StrCat(".val-00000.partial-", dead), prefixes));
  EXPECT_FALSE(IsConvertLeftover("train-00000-of-00001.tfrecord", prefixes));
  EXPECT_FALSE(IsConvertLeftover(".train-00000.partial", prefixes));
  EXPECT_FALSE(IsConvertLeftover(absl::StrCat("notes.txt.tmp-", dead, "-0"), prefixes));
  EXPECT_FALSE(IsShardfeedLeftover("notes.txt"));
  EXPECT_TRUE(IsShardfeedLeftover(absl::StrCat("notes.txt.tmp-", dead, "-0")));
  EXPECT_FALSE(IsShardfeedLeftover(absl::StrCat("notes.txt.tmp-", live, "-0")));
}

TEST(LeftoversTest, RemovesOnlyItsOwnAndFindsAll) {
  const std::string dir = ::testing::TempDir() + "/leftovers";
  ::mkdir(dir.c_str(), 0755);
  const std::string dead = DeadPid();
  const std::string own = absl::StrCat(".train-00000.partial-", dead);
  const std::string other = absl::StrCat("x.bin.tmp-", dead, "-0");
  for (const std::string& f : {own, other, std::string("train-00000-of-00001.tfrecord")}) {
    std::ofstream(dir + "/" + f) << "x";
  }
  EXPECT_EQ(FindLeftovers(dir),
            (std::vector<std::string>{dir + "/" + own, dir + "/" + other}));
  auto removed = RemoveConvertLeftovers(dir, {"train"});
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, std::vector<std::string>{own});
  EXPECT_EQ(FindLeftoversBeside({dir + "/train-00000-of-00001.tfrecord"}),
            std::vector<std::string>{dir + "/" + other});
  EXPECT_TRUE(RemoveConvertLeftovers(dir + "/missing", {"train"}).ok());
}

TEST(LeftoversTest, ErrorsNameWhatTheUserKnows) {
  const std::string partial = PartialShardPath("out", "train", 3);
  EXPECT_EQ(partial, absl::StrCat("out/.train-00003.partial-", ::getpid()));
  EXPECT_EQ(ReplaceTemporaryPath(absl::StrCat(partial, ".tmp-12-0: cannot create: Permission denied"),
                                 partial, "out (shard train-00003)"),
            "out (shard train-00003): cannot create: Permission denied");
  EXPECT_EQ(ReplaceTemporaryPath(absl::StrCat(partial, ": write failed"), partial, "out"),
            "out: write failed");
  EXPECT_EQ(ReplaceTemporaryPath("other: x", partial, "out"), "other: x");
}

}  // namespace
}  // namespace shardfeed
