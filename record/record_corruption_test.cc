// Corruption is reported, never hidden: every flipped byte and every
// truncation of a small shard is DATA_LOSS naming the file and the record's
// offset, never wrong data and never a crash.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "record/crc32c.h"
#include "record/record_format.h"
#include "record/record_reader.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

using testing::MakeTempDir;
using testing::RandomBytes;
using testing::ReadAllRecords;
using testing::ReadBytes;
using testing::WriteBytes;
using testing::WriteRecords;

struct Shard {
  std::vector<std::string> records;
  std::vector<IndexEntry> index;
  std::string bytes;
};

Shard MakeShard(const std::string& path, Compression compression = Compression::kNone) {
  Shard s;
  s.records = {"", "x", RandomBytes(40, 1), RandomBytes(7, 2), "last"};
  RecordWriterOptions opts;
  opts.compression = compression;
  auto writer = RecordWriter::Create(path, opts);
  EXPECT_TRUE(writer.ok());
  for (const auto& r : s.records) EXPECT_TRUE((*writer)->WriteRecord(r).ok());
  s.index = (*writer)->index();
  EXPECT_TRUE((*writer)->Close().ok());
  s.bytes = ReadBytes(path);
  return s;
}

// Index of the record whose framed bytes contain `offset`.
size_t RecordAt(const Shard& s, uint64_t offset) {
  for (size_t i = 0; i < s.index.size(); ++i) {
    if (offset < s.index[i].offset + s.index[i].size) return i;
  }
  return s.index.size();
}

TEST(Corruption, EveryFlippedByteIsDataLossAtItsRecord) {
  std::string dir = MakeTempDir();
  Shard shard = MakeShard(dir + "/good.tfrecord");
  const std::string bad_path = dir + "/bad.tfrecord";
  for (size_t i = 0; i < shard.bytes.size(); ++i) {
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string bytes = shard.bytes;
      bytes[i] = static_cast<char>(bytes[i] ^ mask);
      WriteBytes(bad_path, bytes);
      RecordReaderOptions opts;
      opts.compression = Compression::kNone;
      auto reader = RecordReader::Open(bad_path, opts);
      ASSERT_TRUE(reader.ok());
      size_t bad_record = RecordAt(shard, i);
      absl::string_view r;
      for (size_t k = 0; k < bad_record; ++k) {
        ASSERT_TRUE((*reader)->ReadRecord(&r).ok()) << "byte " << i;
        ASSERT_EQ(shard.records[k], r);
      }
      absl::Status s = (*reader)->ReadRecord(&r);
      ASSERT_EQ(absl::StatusCode::kDataLoss, s.code()) << "flip at byte " << i << ": " << s;
      std::string where = absl::StrCat(bad_path, ":", shard.index[bad_record].offset, ": ");
      ASSERT_EQ(0u, s.message().find(where)) << s.message();
    }
  }
}

TEST(Corruption, TruncationIsDataLossExceptAtRecordBoundaries) {
  std::string dir = MakeTempDir();
  Shard shard = MakeShard(dir + "/good.tfrecord");
  const std::string cut_path = dir + "/cut.tfrecord";
  for (size_t len = 0; len < shard.bytes.size(); ++len) {
    WriteBytes(cut_path, shard.bytes.substr(0, len));
    auto got = ReadAllRecords(cut_path);
    size_t complete = 0;
    bool at_boundary = len == 0;
    for (const IndexEntry& e : shard.index) {
      if (e.offset + e.size <= len) ++complete;
      if (e.offset + e.size == len) at_boundary = true;
    }
    if (at_boundary) {
      ASSERT_TRUE(got.ok()) << "length " << len << ": " << got.status();
      ASSERT_EQ(std::vector<std::string>(shard.records.begin(),
                                         shard.records.begin() + complete),
                *got);
    } else {
      ASSERT_EQ(absl::StatusCode::kDataLoss, got.status().code()) << "length " << len;
      EXPECT_NE(std::string::npos, got.status().message().find("truncated"))
          << got.status().message();
    }
  }
}

TEST(Corruption, TruncatedHeaderIsNotEndOfFile) {
  std::string dir = MakeTempDir();
  Shard shard = MakeShard(dir + "/good.tfrecord");
  WriteBytes(dir + "/cut.tfrecord", shard.bytes + std::string(5, '\0'));
  auto got = ReadAllRecords(dir + "/cut.tfrecord");
  ASSERT_EQ(absl::StatusCode::kDataLoss, got.status().code());
  EXPECT_EQ(absl::StrCat(dir, "/cut.tfrecord:", shard.bytes.size(),
                         ": truncated record header: the file ends after 5 of 12 header bytes"),
            got.status().message());
}

TEST(Corruption, GarbageAtOffsetZeroHintsAtTheFormat) {
  std::string path = MakeTempDir() + "/notes.txt";
  WriteBytes(path, "this is plainly not a TFRecord file\n");
  auto got = ReadAllRecords(path);
  ASSERT_EQ(absl::StatusCode::kDataLoss, got.status().code());
  EXPECT_NE(std::string::npos, got.status().message().find(":0: corrupted record header"));
  EXPECT_NE(std::string::npos, got.status().message().find("is this a TFRecord file?"));
}

TEST(Corruption, HugeLengthWithValidCrcDoesNotAllocate) {
  std::string path = MakeTempDir() + "/huge.tfrecord";
  char header[kRecordHeaderSize];
  EncodeFixed64(header, uint64_t{1} << 60);
  EncodeFixed32(header + 8, crc32c::Mask(crc32c::Value(header, 8)));
  WriteBytes(path, std::string(header, sizeof(header)) + "abc");
  auto got = ReadAllRecords(path);
  ASSERT_EQ(absl::StatusCode::kDataLoss, got.status().code());
  EXPECT_NE(std::string::npos, got.status().message().find("truncated record"));
}

// In a compressed file a flipped byte is either caught (by zlib's own check
// or by a record CRC) or falls in a gzip header field that carries no data
// (mtime, OS): then every record still reads back exactly.
TEST(Corruption, CompressedFlipsNeverGiveWrongData) {
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    std::string dir = MakeTempDir();
    Shard shard = MakeShard(dir + "/good.tfrecord", c);
    size_t caught = 0;
    for (size_t i = 0; i < shard.bytes.size(); ++i) {
      std::string bytes = shard.bytes;
      bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
      WriteBytes(dir + "/bad", bytes);
      RecordReaderOptions opts;
      opts.compression = c;
      auto got = ReadAllRecords(dir + "/bad", opts);
      if (got.ok()) {
        ASSERT_EQ(shard.records, *got) << "byte " << i << " " << CompressionName(c);
      } else {
        ++caught;
        ASSERT_EQ(absl::StatusCode::kDataLoss, got.status().code())
            << "byte " << i << ": " << got.status();
      }
    }
    // Only header bytes that carry no data may go unnoticed.
    EXPECT_GE(caught, shard.bytes.size() - 10) << CompressionName(c);
  }
}

TEST(Corruption, TruncatedGzipIsDataLoss) {
  std::string dir = MakeTempDir();
  Shard shard = MakeShard(dir + "/good.tfrecord.gz", Compression::kGzip);
  for (size_t len = 1; len < shard.bytes.size(); ++len) {
    WriteBytes(dir + "/cut.gz", shard.bytes.substr(0, len));
    auto got = ReadAllRecords(dir + "/cut.gz");
    ASSERT_EQ(absl::StatusCode::kDataLoss, got.status().code()) << "length " << len;
  }
}

TEST(Corruption, TrailingGarbageAfterGzipIsDataLoss) {
  std::string dir = MakeTempDir();
  Shard shard = MakeShard(dir + "/good.tfrecord.gz", Compression::kGzip);
  WriteBytes(dir + "/trail.tfrecord.gz", shard.bytes + "junk");
  auto got = ReadAllRecords(dir + "/trail.tfrecord.gz");
  ASSERT_EQ(absl::StatusCode::kDataLoss, got.status().code());
  EXPECT_NE(std::string::npos, got.status().message().find("trailing garbage"));
}

}  // namespace
}  // namespace shardfeed
