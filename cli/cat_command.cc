// shardfeed cat: prints the records of TFRecord files, one JSON line each.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/record_json.h"
#include "record/record_reader.h"

namespace shardfeed::cli {

int RunCat(int argc, char** argv) {
  FlagParser flags(
      "shardfeed cat [flags] FILE...",
      "Prints every record of each TFRecord FILE (NONE, ZLIB or GZIP; detected\n"
      "automatically) as one line of JSON: the Example in protobuf's canonical\n"
      "JSON mapping when the record is one, otherwise its bytes as a base64\n"
      "string. Every CRC is verified; a corrupt record stops with its file and\n"
      "offset.");
  bool raw = false, count = false;
  std::string compression = "auto";
  flags.AddBool("raw", &raw, "print every record as base64 bytes, even Examples");
  flags.AddBool("count", &count, "print only 'FILE N' per file and 'total N'");
  flags.AddString("compression", &compression, "auto, none, zlib or gzip", "TYPE");
  std::vector<std::string> files;
  if (absl::Status s = flags.Parse(argc, argv, &files); !s.ok()) return ReportError("cat", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (files.empty()) {
    return ReportError("cat", absl::InvalidArgumentError("no FILE given (see --help)"));
  }
  auto parsed = ParseCompression(compression);
  if (!parsed.ok()) return ReportError("cat", parsed.status());
  RecordReaderOptions options;
  options.compression = *parsed;

  uint64_t total = 0;
  std::string line;
  for (const std::string& file : files) {
    auto reader = RecordReader::Open(file, options);
    if (!reader.ok()) return ReportError("cat", reader.status());
    uint64_t n = 0;
    absl::string_view record;
    for (;;) {
      absl::Status s = (*reader)->ReadRecord(&record);
      if (absl::IsOutOfRange(s)) break;
      if (!s.ok()) {
        std::fflush(stdout);
        return ReportError("cat", s);
      }
      ++n;
      if (!count) {
        line = RecordToJson(record, raw);
        line += '\n';
        std::fwrite(line.data(), 1, line.size(), stdout);
      }
    }
    total += n;
    if (count) std::printf("%s %llu\n", file.c_str(), static_cast<unsigned long long>(n));
  }
  if (count) std::printf("total %llu\n", static_cast<unsigned long long>(total));
  if (std::fflush(stdout) != 0) {
    return ReportError("cat", absl::UnavailableError("cannot write to standard output"));
  }
  return kExitOk;
}

}  // namespace shardfeed::cli
