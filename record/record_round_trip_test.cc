// Round trips through RecordWriter and RecordReader, and the writer's
// lifecycle (temporary name, Close, overwrite).
#include <dirent.h>

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "record/crc32c.h"
#include "record/file.h"
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

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  return names;
}

class RoundTrip
    : public ::testing::TestWithParam<std::tuple<Compression, size_t /*reader buffer*/,
                                                 size_t /*writer buffer*/>> {};

TEST_P(RoundTrip, RecordsOfEverySizeSurvive) {
  auto [compression, read_buffer, write_buffer] = GetParam();
  std::vector<std::string> records;
  size_t seed = 1;
  for (size_t size : {size_t{0}, size_t{1}, size_t{100}, size_t{3073}, size_t{0},
                      size_t{5} << 20, size_t{1}, size_t{65536}}) {
    records.push_back(RandomBytes(size, seed++));
  }
  std::string path = MakeTempDir() + "/data.tfrecord";
  RecordWriterOptions wopts;
  wopts.compression = compression;
  wopts.buffer_size = write_buffer;
  WriteRecords(path, records, wopts);

  RecordReaderOptions ropts;
  ropts.buffer_size = read_buffer;
  auto got = ReadAllRecords(path, ropts);  // compression detected from the bytes
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(records.size(), got->size());
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i], (*got)[i]) << "record " << i;

  ropts.compression = compression;  // and given explicitly
  got = ReadAllRecords(path, ropts);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(records, *got);
}

INSTANTIATE_TEST_SUITE_P(
    CompressionsAndBuffers, RoundTrip,
    ::testing::Combine(::testing::Values(Compression::kNone, Compression::kZlib,
                                         Compression::kGzip),
                       ::testing::Values(size_t{64}, size_t{1000}, size_t{4} << 20),
                       ::testing::Values(size_t{1}, size_t{1} << 20)));

TEST(RecordFormat, EmptyRecordIsExactlySixteenKnownBytes) {
  std::string path = MakeTempDir() + "/empty.tfrecord";
  WriteRecords(path, {""});
  const std::string expected("\0\0\0\0\0\0\0\0\x29\x03\x98\x07\xd8\xea\x82\xa2", 16);
  EXPECT_EQ(expected, ReadBytes(path));
}

TEST(RecordWriter, FileChecksumIsTheCrcOfTheBytesOnDisk) {
  // Uncompressed files fold the checksum per record (header, Combine of the
  // data CRC, footer); compressed ones checksum the bytes written. Both must
  // equal crc32c of the file as it lands on disk, for records of one repeated
  // length (the table-driven Combine) and of many lengths.
  for (const char* name : {"plain.tfrecord", "packed.tfrecord.gz", "packed.tfrecord.zlib"}) {
    const std::string path = MakeTempDir() + "/" + name;
    auto w = RecordWriter::Create(path, {});
    ASSERT_TRUE(w.ok()) << w.status();
    for (int i = 0; i < 200; ++i) {
      const std::string record(i < 100 ? 300 : i * 7, static_cast<char>('a' + i % 26));
      if (i % 2 == 0) {
        ASSERT_TRUE((*w)->WriteRecord(record).ok());
      } else {
        std::string framed(kRecordOverhead + record.size(), '\0');
        EncodeFixed64(&framed[0], record.size());
        EncodeFixed32(&framed[8], crc32c::Mask(crc32c::Value(framed.data(), 8)));
        framed.replace(kRecordHeaderSize, record.size(), record);
        EncodeFixed32(&framed[kRecordHeaderSize + record.size()],
                      crc32c::Mask(crc32c::Value(record.data(), record.size())));
        ASSERT_TRUE((*w)->WriteFramedRecord(framed).ok());
      }
    }
    ASSERT_TRUE((*w)->Close().ok());
    const std::string bytes = ReadBytes(path);
    EXPECT_EQ(crc32c::Value(bytes.data(), bytes.size()), (*w)->file_crc32c()) << name;
  }
}

TEST(RecordReader, EmptyFileHasNoRecords) {
  std::string dir = MakeTempDir();
  for (const char* name : {"/empty.tfrecord", "/empty.tfrecord.gz"}) {
    WriteBytes(dir + name, "");
    auto got = ReadAllRecords(dir + name);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->empty());
  }
}

TEST(RecordReader, GzipWithZeroRecordsIsEmpty) {
  std::string path = MakeTempDir() + "/none.tfrecord.gz";
  RecordWriterOptions opts;
  opts.compression = Compression::kGzip;
  WriteRecords(path, {}, opts);
  EXPECT_GT(ReadBytes(path).size(), 0u);
  auto got = ReadAllRecords(path);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->empty());
}

TEST(RecordReader, RecordsAreViewsIntoTheBuffer) {
  std::string path = MakeTempDir() + "/views.tfrecord";
  WriteRecords(path, {"aaaa", "bbbb"});
  auto reader = RecordReader::Open(path);
  ASSERT_TRUE(reader.ok());
  absl::string_view first, second;
  ASSERT_TRUE((*reader)->ReadRecord(&first).ok());
  const char* first_data = first.data();
  ASSERT_TRUE((*reader)->ReadRecord(&second).ok());
  // Both live in one buffer, 16 bytes of framing apart: no per-record copy.
  EXPECT_EQ(first_data + 4 + 16, second.data());
  EXPECT_EQ("bbbb", second);
}

TEST(RecordReader, MultiMemberGzipReadsAsOneStream) {
  std::string dir = MakeTempDir();
  RecordWriterOptions opts;
  opts.compression = Compression::kGzip;
  WriteRecords(dir + "/a.gz", {"one", "two"}, opts);
  WriteRecords(dir + "/b.gz", {"three"}, opts);
  WriteBytes(dir + "/ab.tfrecord.gz", ReadBytes(dir + "/a.gz") + ReadBytes(dir + "/b.gz"));
  auto got = ReadAllRecords(dir + "/ab.tfrecord.gz");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((std::vector<std::string>{"one", "two", "three"}), *got);
}

TEST(RecordReader, SeekToIndexedOffsets) {
  for (Compression c : {Compression::kNone, Compression::kGzip}) {
    std::string path = MakeTempDir() + "/seek.tfrecord";
    RecordWriterOptions opts;
    opts.compression = c;
    std::vector<std::string> records;
    for (int i = 0; i < 50; ++i) records.push_back(RandomBytes(i * 37, i));
    auto writer = RecordWriter::Create(path, opts);
    ASSERT_TRUE(writer.ok());
    for (const auto& r : records) ASSERT_TRUE((*writer)->WriteRecord(r).ok());
    std::vector<IndexEntry> index = (*writer)->index();
    ASSERT_TRUE((*writer)->Close().ok());

    auto reader = RecordReader::Open(path);
    ASSERT_TRUE(reader.ok());
    for (int i : {30, 5, 49, 0, 17}) {
      ASSERT_TRUE((*reader)->SeekToOffset(index[i].offset).ok());
      absl::string_view r;
      ASSERT_TRUE((*reader)->ReadRecord(&r).ok());
      EXPECT_EQ(records[i], r) << "record " << i << " " << CompressionName(c);
    }
  }
}

TEST(RecordReader, MissingFileIsNotFound) {
  auto reader = RecordReader::Open(MakeTempDir() + "/nope.tfrecord");
  EXPECT_EQ(absl::StatusCode::kNotFound, reader.status().code());
  EXPECT_NE(std::string::npos, reader.status().message().find("nope.tfrecord"));
}

TEST(RecordWriter, FileAppearsOnlyOnClose) {
  std::string dir = MakeTempDir();
  auto writer = RecordWriter::Create(dir + "/out.tfrecord", {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->WriteRecord(RandomBytes(3 << 20, 1)).ok());
  EXPECT_FALSE(PathExists(dir + "/out.tfrecord"));
  ASSERT_EQ(1u, ListDir(dir).size());  // the temporary
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_TRUE(PathExists(dir + "/out.tfrecord"));
  EXPECT_EQ(std::vector<std::string>{"out.tfrecord"}, ListDir(dir));
}

TEST(RecordWriter, DestroyedWithoutCloseLeavesNothing) {
  std::string dir = MakeTempDir();
  {
    auto writer = RecordWriter::Create(dir + "/out.tfrecord", {});
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->WriteRecord("partial").ok());
  }
  EXPECT_TRUE(ListDir(dir).empty());
}

TEST(RecordWriter, CallsAfterCloseFail) {
  auto writer = RecordWriter::Create(MakeTempDir() + "/out.tfrecord", {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(absl::StatusCode::kFailedPrecondition, (*writer)->WriteRecord("x").code());
  EXPECT_EQ(absl::StatusCode::kFailedPrecondition, (*writer)->Close().code());
}

TEST(RecordWriter, RefusesToOverwriteUnlessAsked) {
  std::string path = MakeTempDir() + "/out.tfrecord";
  WriteRecords(path, {"first"});
  auto again = RecordWriter::Create(path, {});
  EXPECT_EQ(absl::StatusCode::kAlreadyExists, again.status().code());
  RecordWriterOptions opts;
  opts.overwrite = true;
  WriteRecords(path, {"second"}, opts);
  auto got = ReadAllRecords(path);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(std::vector<std::string>{"second"}, *got);
}

TEST(RecordWriter, CompressionLevelIsValidatedAndHonoured) {
  std::string dir = MakeTempDir();
  std::string text(1 << 20, 'a');
  for (size_t i = 0; i < text.size(); i += 7) text[i] = static_cast<char>('a' + i % 13);
  RecordWriterOptions fast, best;
  fast.compression = best.compression = Compression::kZlib;
  fast.compression_level = 1;
  best.compression_level = 9;
  WriteRecords(dir + "/fast.zlib", {text}, fast);
  WriteRecords(dir + "/best.zlib", {text}, best);
  EXPECT_LE(ReadBytes(dir + "/best.zlib").size(), ReadBytes(dir + "/fast.zlib").size());
  RecordWriterOptions bad;
  bad.compression_level = 12;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument,
            RecordWriter::Create(dir + "/bad", bad).status().code());
}

TEST(RecordWriter, IndexMatchesFraming) {
  auto writer = RecordWriter::Create(MakeTempDir() + "/i.tfrecord", {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->WriteRecord("abc").ok());
  ASSERT_TRUE((*writer)->WriteRecord("").ok());
  EXPECT_EQ((std::vector<IndexEntry>{{0, 19}, {19, 16}}), (*writer)->index());
  EXPECT_EQ(35u, (*writer)->offset());
}

}  // namespace
}  // namespace shardfeed
