// shardfeed index: writes SHARD.index for each shard, verifying every CRC.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flags.h"
#include "converter/index_in_place.h"
#include "record/index.h"

namespace shardfeed::cli {

int RunIndex(int argc, char** argv) {
  FlagParser flags(
      "shardfeed index [flags] FILE...",
      "Writes FILE.index beside each TFRecord FILE: one line \"<offset> <size>\"\n"
      "per record, size being the whole framed record (the format of DALI's\n"
      "tfrecord2idx and of the tfrecord Python package). Every CRC is verified;\n"
      "no index is written for a corrupt file, and the error says where it is\n"
      "corrupt. For compressed files, offsets are in the decompressed stream.\n\n"
      "With --manifest, FILE... is a dataset (a folder of shards, a glob, shard\n"
      "paths; TensorFlow's NAME-NNNNN-of-NNNNN with or without extension) and\n"
      "DIR/manifest.json is written too, last: each shard's split (NAME), record\n"
      "count, size and checksum, and the schema inferred from all records. The\n"
      "shards are not copied or changed; `check`, `bench` and the Loader then\n"
      "treat the folder as a shardfeed dataset.");
  bool manifest = false, overwrite = false;
  flags.AddBool("manifest", &manifest, "also write manifest.json beside the shards");
  flags.AddBool("overwrite", &overwrite, "with --manifest: replace an existing manifest.json");
  std::vector<std::string> files;
  if (absl::Status s = flags.Parse(argc, argv, &files); !s.ok()) return ReportError("index", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (files.empty()) {
    return ReportError("index", absl::InvalidArgumentError("no FILE given (see --help)"));
  }
  if (manifest) {
    auto m = IndexInPlace(files, overwrite);
    if (!m.ok()) return ReportError("index", m.status());
    std::printf("indexed %d shards, %lld records; wrote manifest.json (%d splits, %d features)\n",
                m->shards_size(), static_cast<long long>(m->total_records()), m->splits_size(),
                m->features_size());
    return kExitOk;
  }
  if (overwrite) {
    return ReportError("index", absl::InvalidArgumentError("--overwrite needs --manifest"));
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
