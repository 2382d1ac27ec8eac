// Read + verify throughput of RecordReader against plain pread(2) of the
// same file, and CRC32C against memcpy, in one run (issue: foundation).
//
//   bazel run //bench:record_read_bench -- [--file PATH] [--gib 1.0] [--record-bytes 3072]
//
// Writes the shard if PATH does not exist, reads it once to warm the page
// cache, then times each contender best-of-5 on one core and prints GB/s and
// the ratios.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "bench/timing.h"
#include "record/crc32c.h"
#include "record/file.h"
#include "record/record_reader.h"
#include "record/record_writer.h"

namespace shardfeed::bench {
namespace {

void Die(const absl::Status& s) {
  std::fprintf(stderr, "record_read_bench: %s\n", s.ToString().c_str());
  std::exit(2);
}

void WriteShard(const std::string& path, double gib, size_t record_bytes) {
  RecordWriterOptions options;
  options.overwrite = true;
  auto writer = RecordWriter::Create(path, options);
  if (!writer.ok()) Die(writer.status());
  std::string record(record_bytes, '\0');
  uint64_t x = 88172645463325252ull;
  const uint64_t target = static_cast<uint64_t>(gib * (1ull << 30));
  while ((*writer)->offset() < target) {
    for (size_t i = 0; i + 8 <= record.size(); i += 8) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::memcpy(&record[i], &x, 8);
    }
    if (absl::Status s = (*writer)->WriteRecord(record); !s.ok()) Die(s);
  }
  if (absl::Status s = (*writer)->Close(); !s.ok()) Die(s);
}

uint64_t PreadAll(const std::string& path, size_t chunk) {
  int fd = ::open(path.c_str(), O_RDONLY);
  std::vector<char> buf(chunk);
  uint64_t total = 0, sum = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(total));
    if (n <= 0) break;
    total += static_cast<uint64_t>(n);
    sum += static_cast<unsigned char>(buf[0]);  // keep the read observable
  }
  ::close(fd);
  return total + (sum & 0);
}

uint64_t ReadRecords(const std::string& path, size_t buffer_size) {
  RecordReaderOptions options;
  options.buffer_size = buffer_size;
  auto reader = RecordReader::Open(path, options);
  if (!reader.ok()) Die(reader.status());
  absl::string_view record;
  uint64_t n = 0;
  absl::Status s;
  while ((s = (*reader)->ReadRecord(&record)).ok()) ++n;
  if (!absl::IsOutOfRange(s)) Die(s);
  return n;
}

}  // namespace
}  // namespace shardfeed::bench

int main(int argc, char** argv) {
  using namespace shardfeed;
  using namespace shardfeed::bench;
  std::string path = "/tmp/shardfeed-bench-3k.tfrecord";
  double gib = 1.0;
  size_t record_bytes = 3072;
  size_t buffer_size = 1 << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--file") path = argv[i + 1];
    else if (flag == "--gib") absl::SimpleAtod(argv[i + 1], &gib);
    else if (flag == "--record-bytes") absl::SimpleAtoi(argv[i + 1], &record_bytes);
    else if (flag == "--buffer-bytes") absl::SimpleAtoi(argv[i + 1], &buffer_size);
  }
  if (!PathExists(path)) {
    std::fprintf(stderr, "writing %.2f GiB of %zu-byte records to %s\n", gib, record_bytes,
                 path.c_str());
    WriteShard(path, gib, record_bytes);
  }
  auto file = ReadableFile::Open(path);
  if (!file.ok()) Die(file.status());
  const double bytes = static_cast<double>((*file)->size());
  PreadAll(path, 4 << 20);  // warm the page cache

  const int kRepeats = 5;
  uint64_t records = 0;
  double t_pread = BestOf(kRepeats, [&] { PreadAll(path, 4 << 20); });
  double t_reader = BestOf(kRepeats, [&] { records = ReadRecords(path, buffer_size); });

  // CRC32C against memcpy over a 256 MiB buffer in memory.
  std::vector<char> src(256 << 20), dst(256 << 20);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 131);
  std::memcpy(dst.data(), src.data(), src.size());  // fault the pages in
  volatile uint32_t sink = 0;
  double t_memcpy = BestOf(kRepeats, [&] { std::memcpy(dst.data(), src.data(), src.size()); });
  double t_crc = BestOf(kRepeats, [&] { sink = crc32c::Value(src.data(), src.size()); });
  double t_portable =
      BestOf(2, [&] { sink = crc32c::ExtendPortable(0, src.data(), src.size()); });
  (void)sink;

  const double gb = 1e9;
  std::printf("shard: %s, %.0f MB, %llu records of %zu bytes (page cache warm)\n",
              path.c_str(), bytes / 1e6, static_cast<unsigned long long>(records),
              record_bytes);
  std::printf("crc32c implementation: %s\n", crc32c::ImplementationName());
  std::printf("%-36s %8.2f GB/s\n", "pread, 4 MiB chunks (baseline)", bytes / t_pread / gb);
  std::printf("%-36s %8.2f GB/s   %.2fx pread  (reader buffer %zu KiB)\n",
              "RecordReader read + verify CRCs", bytes / t_reader / gb, t_pread / t_reader,
              buffer_size >> 10);
  std::printf("%-36s %8.2f GB/s\n", "memcpy 256 MiB (baseline)", src.size() / t_memcpy / gb);
  std::printf("%-36s %8.2f GB/s   %.2fx memcpy\n", "crc32c (selected)", src.size() / t_crc / gb,
              t_memcpy / t_crc);
  std::printf("%-36s %8.2f GB/s   %.2fx memcpy\n", "crc32c (portable fallback)",
              src.size() / t_portable / gb, t_memcpy / t_portable);
  return 0;
}
