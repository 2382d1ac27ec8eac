// shardfeed index: writes SHARD.index for each shard, verifying every CRC.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flags.h"
#include "record/index.h"

namespace shardfeed::cli {

int RunIndex(int argc, char** argv) {
  FlagParser flags(
      "shardfeed index [flags] FILE...",
      "Writes FILE.index beside each TFRecord FILE: one line \"<offset> <size>\"\n"
      "per record, size being the whole framed record (the format of DALI's\n"
      "tfrecord2idx and of the tfrecord Python package). Every CRC is verified;\n"
      "no index is written for a corrupt file, and the error says where it is\n"
      "corrupt. For compressed files, offsets are in the decompressed stream.");
  std::vector<std::string> files;
  if (absl::Status s = flags.Parse(argc, argv, &files); !s.ok()) return ReportError("index", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (files.empty()) {
    return ReportError("index", absl::InvalidArgumentError("no FILE given (see --help)"));
  }
  int exit_code = kExitOk;
  for (const std::string& file : files) {
    auto entries = BuildIndex(file);
    absl::Status s = entries.status();
    if (s.ok()) s = WriteIndexFile(IndexPathFor(file), *entries);
    if (!s.ok()) {
      exit_code = std::max(exit_code, ReportError("index", s));
      continue;
    }
    std::printf("%s %zu records\n", IndexPathFor(file).c_str(), entries->size());
  }
  return exit_code;
}

}  // namespace shardfeed::cli
