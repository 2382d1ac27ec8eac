// shardfeed convert: packs many small files into ~100 MB TFRecord shards.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "cli/upload_progress.h"
#include "converter/convert.h"
#include "converter/task_part.h"
#include "record/plural.h"

namespace shardfeed::cli {

int RunConvert(int argc, char** argv) {
  FlagParser flags(
      "shardfeed convert TYPE --input IN --output DIR [flags]",
      "Packs a dataset into pre-shuffled TFRecord shards (~100 MB each), with an\n"
      "index per shard (SHARD.index) and DIR/manifest.json, written last.\n\n"
      "TYPE is one of:\n"
      "  cifar10, cifar100  the extracted folder or the downloaded .tar.gz, binary or\n"
      "                     python layout; Example: image (3072 raw bytes), label,\n"
      "                     [coarse_label], height, width, depth\n"
      "  mnist              a folder with the idx files (gzipped or not)\n"
      "  image-folder       ROOT/<class>/<image> or ROOT/<split>/<class>/<image>;\n"
      "                     TF-Slim features image/encoded, image/format, ...\n"
      "  files              a glob ('audio/*.wav') or @LIST (lines 'path[,label]')\n"
      "  tfrecord           an existing TFRecord dataset (a folder, glob or manifest.json;\n"
      "                     any compression, TensorFlow's NAME-NNNNN-of-NNNNN with or\n"
      "                     without extension), resharded; records copied as they are,\n"
      "                     the schema inferred from all records; splits from the names\n\n"
      "The same input and flags always give byte-identical output. Shards appear\n"
      "under their final names only when all are complete; on error or Ctrl-C,\n"
      "nothing that looks complete is left.\n\n"
      "DIR may be a bucket: s3://BUCKET/PREFIX/ or gs://BUCKET/PREFIX/. The shards\n"
      "are staged in a folder under $TMPDIR (removed afterwards), then uploaded\n"
      "(multipart above SHARDFEED_UPLOAD_THRESHOLD, 32MiB; parts of\n"
      "SHARDFEED_UPLOAD_PART_SIZE, 16MiB), manifest.json last: the dataset is\n"
      "complete exactly when its manifest exists, and a failed upload leaves none.");
  std::string input, output, prefix, shard_size = "100MB", compression = "none",
                                     validation_from;
  int64_t num_shards = 0, seed = 0, threads = 0, level = -1, max_side = 0, quality = 90;
  int64_t task_index = -1, task_count = -1;
  bool no_shuffle = false, overwrite = false, strict = false, json = false, quiet = false,
       allow_small = false;
  flags.AddString("input", &input, "the dataset to convert", "IN");
  flags.AddString("output", &output,
                  "the output directory (created if missing), or s3:// / gs:// prefix", "DIR");
  flags.AddString("prefix", &prefix, "shard name prefix (default: the split name)", "NAME");
  flags.AddString("shard-size", &shard_size,
                  "target shard size (B, kB, MB, GB, KiB, MiB, GiB; any case)", "SIZE");
  flags.AddBool("allow-small-shards", &allow_small,
                "accept a --shard-size below 100 kB (a file per few records)");
  flags.AddInt("num-shards", &num_shards,
               "exactly N shards per split (overrides --shard-size; a split with fewer\n"
               "                            records gets one shard per record, and a warning)",
               "N", {0, kMaxNumShards});
  flags.AddInt("seed", &seed, "seed of the shuffle");
  flags.AddBool("no-shuffle", &no_shuffle, "keep the input order");
  flags.AddString("compression", &compression, "none, zlib or gzip (shards get .gz)", "TYPE");
  flags.AddInt("compression-level", &level, "zlib level 0..9, -1 for zlib's default", "N",
               {-1, 9});
  flags.AddInt("threads", &threads, "threads building records (0: one per core)", "N",
               {0, kMaxThreads});
  flags.AddString("validation-from", &validation_from,
                  "CIFAR: split this training batch off as 'validation' (e.g. data_batch_5,\n"
                  "                            as TensorFlow's CIFAR-10 script does)",
                  "BATCH");
  flags.AddBool("strict", &strict,
                "image-folder: a file that is not an image, or a broken one, is an error\n"
                "                            (default: skipped with a warning)");
  flags.AddInt("max-side", &max_side,
               "image-folder: re-encode images whose longer side exceeds N as JPEG with\n"
               "                            that side N (cheaper decoding; 0: keep the bytes)",
               "N", {0, 65535});
  flags.AddInt("quality", &quality, "image-folder --max-side: JPEG quality", "Q",
               {1, 100});
  flags.AddBool("overwrite", &overwrite, "replace an existing dataset in DIR");
  flags.AddInt("task-index", &task_index,
               "write only task I's share into DIR/_parts (then: shardfeed merge DIR);\n"
               "                            default: from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX",
               "I");
  flags.AddInt("task-count", &task_count,
               "the number of tasks; default: SLURM_ARRAY_TASK_COUNT", "N");
  flags.AddBool("json", &json, "print a JSON summary on stdout");
  flags.AddBool("quiet", &quiet, "no summary or warnings on stderr");
  std::vector<std::string> args;
  if (absl::Status s = flags.Parse(argc, argv, &args); !s.ok()) return ReportError("convert", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (args.size() != 1) {
    return ReportError("convert", absl::InvalidArgumentError(
                                      "give exactly one TYPE: cifar10, cifar100, mnist, "
                                      "image-folder, files or tfrecord (see --help)"));
  }
  ConvertOptions o;
  o.type = args[0];
  o.input = input;
  o.output_dir = output;
  o.prefix = prefix;
  auto size = ParseByteSize(shard_size);
  if (!size.ok()) return ReportError("convert", size.status());
  o.shard_size = *size;
  o.allow_small_shards = allow_small;
  o.num_shards = num_shards;
  o.shuffle = !no_shuffle;
  o.seed = static_cast<uint64_t>(seed);
  auto c = ParseCompression(compression);
  if (!c.ok()) return ReportError("convert", c.status());
  o.compression = *c;
  o.compression_level = static_cast<int>(level);
  o.threads = static_cast<int>(threads);
  o.overwrite = overwrite;
  o.strict = strict;
  o.validation_from = validation_from;
  auto task = ResolveTask(task_index, task_count);
  if (!task.ok()) return ReportError("convert", task.status());
  o.task_index = task->first;
  o.task_count = task->second;
  o.max_side = static_cast<int>(max_side);
  o.quality = static_cast<int>(quality);
  InstallInterruptHandler();
  o.cancelled = [] { return Interrupted(); };
  ProgressLine line;
  o.progress = [&line](const ConvertProgress& p) {
    line.Update(p.split, p.records_done, p.records_total, p.bytes_written);
  };
  UploadLine upload_line(output, quiet);
  o.uploaded = upload_line.Callback();
  auto summary = Convert(o);
  line.Finish();
  upload_line.Finish();
  if (!summary.ok()) return ReportError("convert", summary.status(), json);
  if (!quiet && o.task_count > 0) {
    const Manifest& m = summary->manifest;
    std::fprintf(stderr, "task %d of %d: wrote %s (%s, %s) in %s in %.2fs\n",
                 o.task_index, o.task_count, Plural(m.shards_size(), "shard").c_str(),
                 Plural(m.total_records(), "record").c_str(), HumanBytes(m.total_bytes()).c_str(),
                 PartFolder(output, o.task_index, o.task_count).c_str(), summary->seconds);
  } else if (!quiet) {
    for (const auto& w : summary->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    const Manifest& m = summary->manifest;
    std::fprintf(stderr, "converted %s (%s) into %s in %s in %.2fs (%s/s)%s\n",
                 Plural(m.total_records(), "record").c_str(), HumanBytes(m.total_bytes()).c_str(),
                 Plural(m.shards_size(), "shard").c_str(), output.c_str(), summary->seconds,
                 HumanBytes(m.total_bytes() / std::max(summary->seconds, 1e-9)).c_str(),
                 m.skipped_inputs() > 0
                     ? absl::StrCat("; skipped ", Plural(m.skipped_inputs(), "input file"),
                                    " (see the warnings)").c_str()
                     : "");
  }
  if (json) std::printf("%s\n", SummaryToJson(*summary).c_str());
  return kExitOk;
}

}  // namespace shardfeed::cli
