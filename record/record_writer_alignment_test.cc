// RecordWriter's writes end at multiples of buffer_size in the file (2 MiB by
// default), so the page cache holds a shard in folios of that size and
// readers that map it get huge pages. The test interposes write(2) (this
// binary's definition wins over libc's for record/file.cc's calls) and
// records the size of every write of the file.
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "record/record_format.h"
#include "record/record_reader.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace {
bool g_recording = false;
std::vector<size_t>* g_sizes = nullptr;
}  // namespace

extern "C" ssize_t write(int fd, const void* buf, size_t n) {
  if (g_recording && g_sizes != nullptr && fd > 2) g_sizes->push_back(n);
  return syscall(SYS_write, fd, buf, n);
}

namespace shardfeed {
namespace {

// Writes `records` with `options`, returning the size of each write(2).
std::vector<size_t> WriteSizes(const std::string& path, const std::vector<std::string>& records,
                               const RecordWriterOptions& options) {
  std::vector<size_t> sizes;
  g_sizes = &sizes;
  g_recording = true;
  testing::WriteRecords(path, records, options);
  g_recording = false;
  g_sizes = nullptr;
  return sizes;
}

void ExpectAlignedWrites(const std::vector<size_t>& sizes, size_t period, uint64_t total) {
  ASSERT_FALSE(sizes.empty());
  uint64_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    at += sizes[i];
    if (i + 1 < sizes.size()) {
      EXPECT_EQ(at % period, 0u) << "write " << i << " of " << sizes.size() << " ends at " << at;
    }
  }
  EXPECT_EQ(at, total);
}

TEST(RecordWriterAlignment, WritesEndAtMultiplesOfTheBufferSize) {
  std::vector<std::string> records;  // CIFAR-sized records: 3,088 bytes framed
  for (int i = 0; i < 300; ++i) records.push_back(testing::RandomBytes(3072, i + 1));
  const uint64_t total = records.size() * (3072 + kRecordOverhead);
  RecordWriterOptions options;
  options.buffer_size = 64 << 10;
  const std::string dir = testing::MakeTempDir();
  ExpectAlignedWrites(WriteSizes(dir + "/a.tfrecord", records, options), 64 << 10, total);
  // The file is intact.
  auto got = testing::ReadAllRecords(dir + "/a.tfrecord", RecordReaderOptions());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, records);
}

TEST(RecordWriterAlignment, DefaultIsTwoMiBAndLargeRecordsStayAligned) {
  EXPECT_EQ(RecordWriterOptions().buffer_size, size_t{2} << 20);
  // Records larger than the buffer (whole periods go straight through)
  // between small ones.
  std::vector<std::string> records;
  for (size_t size : {size_t{100}, size_t{5} << 20, size_t{3}, size_t{2} << 20, size_t{70000}}) {
    records.push_back(testing::RandomBytes(size, size));
  }
  uint64_t total = 0;
  for (const std::string& r : records) total += r.size() + kRecordOverhead;
  const std::string dir = testing::MakeTempDir();
  ExpectAlignedWrites(WriteSizes(dir + "/b.tfrecord", records, RecordWriterOptions()), 2 << 20,
                      total);
  auto got = testing::ReadAllRecords(dir + "/b.tfrecord", RecordReaderOptions());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, records);
}

}  // namespace
}  // namespace shardfeed
