// shardfeed index: writes SHARD.index for each shard, verifying every CRC.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flags.h"
#include "converter/index_in_place.h"
#include "reader/shard_selection.h"
#include "record/index.h"
#include "record/plural.h"

namespace shardfeed::cli {

int RunIndex(int argc, char** argv) {
  FlagParser flags(
      "shardfeed index [flags] PATH...",
      "Writes FILE.index beside each TFRecord shard FILE that PATH names (a\n"
      "shard, a quoted glob, a folder of shards, a dataset folder or its\n"
      "manifest.json; every split unless --split): one line \"<offset> <size>\"\n"
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
  std::string split;
  flags.AddBool("manifest", &manifest, "also write manifest.json beside the shards");
  flags.AddBool("overwrite", &overwrite, "with --manifest: replace an existing manifest.json");
  flags.AddString("split", &split, "only the shards of this split (e.g. train)", "NAME");
  std::vector<std::string> paths;
  if (absl::Status s = flags.Parse(argc, argv, &paths); !s.ok()) return ReportError("index", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (paths.empty()) {
    return ReportError("index", absl::InvalidArgumentError("no PATH given (see --help)"));
  }
  if (manifest) {
    if (!split.empty()) {
      return ReportError("index", absl::InvalidArgumentError(
                                      "--manifest describes every split: drop --split"));
    }
    auto m = IndexInPlace(paths, overwrite);
    if (!m.ok()) return ReportError("index", m.status());
    std::printf("indexed %s, %s; wrote manifest.json (%s, %s)\n",
                Plural(m->shards_size(), "shard").c_str(),
                Plural(m->total_records(), "record").c_str(),
                Plural(m->splits_size(), "split").c_str(),
                Plural(m->features_size(), "feature").c_str());
    return kExitOk;
  }
  if (overwrite) {
    return ReportError("index", absl::InvalidArgumentError("--overwrite needs --manifest"));
  }
  auto selected = SelectShards(paths, split, SplitDefault::kAll);
  if (!selected.ok()) return ReportError("index", selected.status());
  int exit_code = kExitOk;
  for (const SelectedShard& shard : selected->shards) {
    const std::string& file = shard.path;
    auto entries = BuildIndex(file);
    absl::Status s = entries.status();
    if (s.ok()) s = WriteIndexFile(IndexPathFor(file), *entries);
    if (!s.ok()) {
      exit_code = std::max(exit_code, ReportError("index", s));
      continue;
    }
    std::printf("%s %s\n", IndexPathFor(file).c_str(),
                Plural(static_cast<int64_t>(entries->size()), "record").c_str());
  }
  return exit_code;
}

}  // namespace shardfeed::cli
