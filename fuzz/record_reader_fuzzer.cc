// libFuzzer target: any bytes, read as a TFRecord file (uncompressed, ZLIB,
// GZIP) and scanned with the resynchronizing scanner, must give records or
// DATA_LOSS: never a crash, a hang or a sanitizer report. And the reader and
// the scanner must agree on a clean file.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "record/record_reader.h"
#include "record/record_scanner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardfeed;
  static const std::string path = [] {
    char name[] = "/dev/shm/shardfeed-fuzz-XXXXXX";
    int fd = mkstemp(name);
    close(fd);
    return std::string(name);
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);

  for (Compression c : {Compression::kAuto, Compression::kNone, Compression::kZlib,
                        Compression::kGzip}) {
    RecordReaderOptions options;
    options.compression = c;
    options.buffer_size = 64;
    auto reader = RecordReader::Open(path, options);
    if (!reader.ok()) abort();  // the file exists: opening never fails
    std::vector<std::string> records;
    absl::string_view r;
    absl::Status s;
    while ((s = (*reader)->ReadRecord(&r)).ok()) records.emplace_back(r);
    if (!absl::IsOutOfRange(s) && !absl::IsDataLoss(s)) abort();
    if (c == Compression::kNone) {
      RecordScanner scanner(bytes);
      ScannedRecord rec;
      SkippedRegion skip;
      bool had_skip, any_skip = false;
      std::vector<std::string> scanned;
      while (true) {
        bool more = scanner.Next(&rec, &skip, &had_skip);
        any_skip |= had_skip;
        if (!more) break;
        scanned.emplace_back(rec.data);
      }
      // On a clean file both see the same records.
      if (absl::IsOutOfRange(s) && (any_skip || scanned != records)) abort();
    }
  }
  return 0;
}
