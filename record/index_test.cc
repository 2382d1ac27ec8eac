#include "record/index.h"

#include "gtest/gtest.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

using testing::MakeTempDir;
using testing::ReadBytes;
using testing::WriteBytes;
using testing::WriteRecords;

TEST(Index, FormatIsOffsetSpaceFramedSize) {
  EXPECT_EQ("0 19\n19 16\n", FormatIndex({{0, 19}, {19, 16}}));
  EXPECT_EQ("a.tfrecord.index", IndexPathFor("a.tfrecord"));
}

TEST(Index, BuildIndexMatchesWriterAndRoundTripsThroughFile) {
  std::string dir = MakeTempDir();
  auto writer = RecordWriter::Create(dir + "/s.tfrecord", {});
  ASSERT_TRUE(writer.ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE((*writer)->WriteRecord(std::string(i, 'z')).ok());
  std::vector<IndexEntry> from_writer = (*writer)->index();
  ASSERT_TRUE((*writer)->Close().ok());

  auto built = BuildIndex(dir + "/s.tfrecord");
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(from_writer, *built);
  ASSERT_TRUE(WriteIndexFile(dir + "/s.tfrecord.index", *built).ok());
  auto read = ReadIndexFile(dir + "/s.tfrecord.index");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*built, *read);
}

TEST(Index, BuildIndexRefusesCorruptShard) {
  std::string dir = MakeTempDir();
  WriteRecords(dir + "/s.tfrecord", {"aaaa", "bbbb", "cccc"});
  std::string bytes = ReadBytes(dir + "/s.tfrecord");
  bytes[20 + 12 + 1] ^= 1;  // data of the second record (offset 20)
  WriteBytes(dir + "/s.tfrecord", bytes);
  auto built = BuildIndex(dir + "/s.tfrecord");
  ASSERT_EQ(absl::StatusCode::kDataLoss, built.status().code());
  EXPECT_NE(std::string::npos, built.status().message().find("s.tfrecord:20: "));
}

TEST(Index, MalformedLinesNameTheFileAndLine) {
  auto bad = ParseIndex("0 16\n16 x\n", "f.index");
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, bad.status().code());
  EXPECT_NE(std::string::npos, bad.status().message().find("f.index: line 2"));
  EXPECT_FALSE(ParseIndex("0 10\n", "f").ok());         // below the 16-byte minimum
  EXPECT_FALSE(ParseIndex("0 20\n10 16\n", "f").ok());  // overlapping
  auto ok = ParseIndex("0 16\n16 20\n", "f");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(2u, ok->size());
}

// The common "<digits> <digits>" lines take a fast path; every other form
// the index format allows (repeated or surrounding spaces, a CR, numbers of
// 19+ digits) still parses, to the same values.
TEST(Index, EveryFormParsesToTheSameEntries) {
  auto got = ParseIndex("0 16\n  16   20 \n36 16\r\n\n52 9999999999999999999\n"
                        "10000000000000000051 1000\n",
                        "f.index");
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<IndexEntry> want = {{0, 16},
                                        {16, 20},
                                        {36, 16},
                                        {52, 9999999999999999999u},
                                        {10000000000000000051u, 1000}};
  EXPECT_EQ(*got, want);
  EXPECT_FALSE(ParseIndex("0 16 3\n", "f").ok());   // three numbers
  EXPECT_FALSE(ParseIndex("0 -16\n", "f").ok());    // a sign
  EXPECT_FALSE(ParseIndex("0 99999999999999999999\n", "f").ok());  // past 2^64
}

// Review finding 1: offset + size wrapped past 2^64 and the next line's
// overlap check then passed (old code accepted this index).
TEST(Index, OffsetPlusSizeOverflowIsRejected) {
  auto bad = ParseIndex("0 16\n16 18446744073709551600\n40 16\n", "f.index");
  ASSERT_EQ(absl::StatusCode::kInvalidArgument, bad.status().code());
  EXPECT_NE(std::string::npos, bad.status().message().find("f.index: line 2")) << bad.status();
}

}  // namespace
}  // namespace shardfeed
