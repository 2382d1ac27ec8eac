// shardfeed merge: one dataset from the parts of `convert --task-index I
// --task-count N` tasks (or of Python writers with task_index/task_count).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "cli/upload_progress.h"
#include "converter/convert.h"
#include "converter/merge.h"
#include "record/plural.h"
#include "record/shard_name.h"

namespace shardfeed::cli {

int RunMerge(int argc, char** argv) {
  FlagParser flags(
      "shardfeed merge DIR [flags]",
      "Makes one dataset of the task parts in DIR/_parts (written by\n"
      "'shardfeed convert ... --task-index I --task-count N' or by Python writers\n"
      "with task_index/task_count). Verifies every part first: all N tasks\n"
      "finished, from the same run, every shard with the size, CRC32C and record\n"
      "count its task recorded. On any problem it names the task (run it again)\n"
      "and changes nothing (exit 1). Otherwise it moves the shards to their final\n"
      "names, writes DIR/manifest.json last and removes DIR/_parts. Converted by\n"
      "tasks, the dataset is byte-identical to a single-process conversion.\n\n"
      "With --output s3://BUCKET/PREFIX/ (or gs://) the verified shards and their\n"
      "indexes are uploaded there instead, manifest.json last (a failed upload\n"
      "leaves no manifest); DIR stays as it is.");
  int64_t threads = 0;
  bool json = false, quiet = false, overwrite = false;
  std::string output;
  flags.AddInt("threads", &threads, "threads verifying shards (0: one per core)");
  flags.AddString("output", &output, "upload the dataset to this s3:// or gs:// prefix", "URL");
  flags.AddBool("overwrite", &overwrite, "with --output: replace a dataset shardfeed wrote there");
  flags.AddBool("json", &json, "print the manifest's summary as JSON on stdout");
  flags.AddBool("quiet", &quiet, "no summary on stderr");
  std::vector<std::string> args;
  if (absl::Status s = flags.Parse(argc, argv, &args); !s.ok()) return ReportError("merge", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (args.size() != 1) {
    return ReportError("merge", absl::InvalidArgumentError("give exactly one DIR (see --help)"));
  }
  MergeOptions o;
  o.threads = static_cast<int>(threads);
  o.output = output;
  o.overwrite = overwrite;
  UploadLine upload_line(output, quiet);
  o.uploaded = upload_line.Callback();
  auto summary = Merge(args[0], o);
  upload_line.Finish();
  if (!summary.ok()) return ReportError("merge", summary.status());
  const Manifest& m = summary->manifest;
  if (!quiet) {
    std::fprintf(stderr, "merged %s: %s (%s) in %s; wrote %s\n",
                 Plural(summary->tasks, "task").c_str(), Plural(m.total_records(), "record").c_str(),
                 HumanBytes(m.total_bytes()).c_str(), Plural(m.shards_size(), "shard").c_str(),
                 JoinPath(output.empty() ? args[0] : output, kManifestName).c_str());
  }
  if (json) {
    ConvertSummary s;
    s.manifest = m;
    s.seconds = summary->seconds;
    std::printf("%s\n", SummaryToJson(s).c_str());
  }
  return kExitOk;
}

}  // namespace shardfeed::cli
