#include "record/record_scanner.h"

#include "gtest/gtest.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

using testing::RandomBytes;

struct Stream {
  std::string bytes;
  std::vector<std::string> records;
  std::vector<IndexEntry> index;
};

Stream MakeStream() {
  Stream s;
  std::string path = testing::MakeTempDir() + "/s.tfrecord";
  auto w = RecordWriter::Create(path, {});
  for (int i = 0; i < 8; ++i) {
    s.records.push_back(RandomBytes(5 + i * 7, i));
    EXPECT_TRUE((*w)->WriteRecord(s.records.back()).ok());
  }
  s.index = (*w)->index();
  EXPECT_TRUE((*w)->Close().ok());
  s.bytes = testing::ReadBytes(path);
  return s;
}

TEST(RecordScanner, CleanStreamHasNoSkips) {
  Stream s = MakeStream();
  RecordScanner scanner(s.bytes);
  ScannedRecord r;
  SkippedRegion skip;
  bool had_skip;
  size_t n = 0;
  while (scanner.Next(&r, &skip, &had_skip)) {
    EXPECT_FALSE(had_skip);
    EXPECT_EQ(s.records[n], r.data);
    EXPECT_EQ(s.index[n].offset, r.offset);
    ++n;
  }
  EXPECT_EQ(s.records.size(), n);
}

// Any single damaged byte costs exactly its own record: the scanner resyncs
// on the next record and reports the damaged record's byte range.
TEST(RecordScanner, EveryFlippedByteLosesOnlyItsRecord) {
  Stream s = MakeStream();
  for (size_t i = 0; i < s.bytes.size(); ++i) {
    std::string bytes = s.bytes;
    bytes[i] ^= 0x20;
    size_t bad = 0;
    while (i >= s.index[bad].offset + s.index[bad].size) ++bad;
    RecordScanner scanner(bytes);
    ScannedRecord r;
    SkippedRegion skip;
    bool had_skip;
    std::vector<std::string> got;
    int skips = 0;
    while (true) {
      bool more = scanner.Next(&r, &skip, &had_skip);
      if (had_skip) {
        ++skips;
        EXPECT_EQ(s.index[bad].offset, skip.begin) << "byte " << i;
        EXPECT_EQ(s.index[bad].offset + s.index[bad].size, skip.end) << "byte " << i;
      }
      if (!more) break;
      got.emplace_back(r.data);
    }
    std::vector<std::string> want = s.records;
    want.erase(want.begin() + bad);
    ASSERT_EQ(1, skips) << "byte " << i;
    ASSERT_EQ(want, got) << "byte " << i;
  }
}

TEST(RecordScanner, GarbageBetweenRecordsIsSkippedAsARange) {
  Stream s = MakeStream();
  std::string bytes = s.bytes.substr(0, s.index[3].offset) + "GARBAGE!" +
                      s.bytes.substr(s.index[3].offset);
  RecordScanner scanner(bytes);
  ScannedRecord r;
  SkippedRegion skip;
  bool had_skip;
  size_t n = 0;
  while (true) {
    bool more = scanner.Next(&r, &skip, &had_skip);
    if (had_skip) {
      EXPECT_EQ(s.index[3].offset, skip.begin);
      EXPECT_EQ(s.index[3].offset + 8, skip.end);
    }
    if (!more) break;
    ++n;
  }
  EXPECT_EQ(s.records.size(), n);
}

TEST(RecordScanner, TruncatedTailIsReported) {
  Stream s = MakeStream();
  std::string bytes = s.bytes.substr(0, s.bytes.size() - 3);
  RecordScanner scanner(bytes);
  ScannedRecord r;
  SkippedRegion skip;
  bool had_skip, saw = false;
  while (true) {
    bool more = scanner.Next(&r, &skip, &had_skip);
    if (had_skip) {
      saw = true;
      EXPECT_EQ(s.index.back().offset, skip.begin);
      EXPECT_EQ(bytes.size(), skip.end);
      EXPECT_NE(std::string::npos, skip.reason.find("truncated record"));
    }
    if (!more) break;
  }
  EXPECT_TRUE(saw);
}

}  // namespace
}  // namespace shardfeed
