// shardfeed check: "can I start a week-long run on these shards?"
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "check/check.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "reader/schema_inference.h"
#include "record/plural.h"

namespace shardfeed::cli {
namespace {

void PrintSchema(const SchemaReport& schema) {
  std::printf("schema (%s):\n", schema.inferred ? schema.source.c_str()
                                                : ("from " + schema.source).c_str());
  if (schema.features.empty()) std::printf("  (no features)\n");
  for (const FeatureSchema& f : schema.features) {
    std::printf("  %s\n", DescribeFeature(f).c_str());
  }
  if (!schema.feature_lists.empty()) {
    std::printf("  SequenceExample feature_lists (values not checked): %s\n",
                absl::StrJoin(schema.feature_lists, ", ").c_str());
  }
}

}  // namespace

int RunCheck(int argc, char** argv) {
  FlagParser flags(
      "shardfeed check [flags] PATH...",
      "Verifies TFRecord shards. PATH is a shard, a glob, a directory or a\n"
      "manifest.json (a directory holding manifest.json is checked as a dataset).\n\n"
      "Checks the framing and both CRCs of every record, a clean end of file (a\n"
      "truncated tail is reported, not taken for the end), decompression, that\n"
      "every record is an Example with the dataset's schema, and each shard's\n"
      ".index and the manifest (every listed shard present with its record count,\n"
      "size and checksum; no unlisted shards). The schema is the manifest's (also\n"
      "for a shard given by path with manifest.json beside it); without one it is\n"
      "inferred from ALL records: a feature missing from some records is optional,\n"
      "a varying number of values is variable-length; only a feature whose kind\n"
      "differs between records (bytes here, int64 there) is a problem. The summary\n"
      "shows the schema. Shards: names with .tfrecord or TensorFlow's\n"
      "NAME-NNNNN-of-NNNNN (any extension); .index files matched by a glob are\n"
      "not shards, a manifest.json matched is the dataset.\n\n"
      "Encoded images and audio (a feature the manifest declares an image, e.g.\n"
      "image-folder's image/encoded, and every JPEG, PNG or WAV value) are\n"
      "verified as the Loader's decode stage reads them: headers (format, size,\n"
      "a file cut short) always, a whole decode with --decode (the default for\n"
      "datasets made by `convert image-folder`). A GIF, WebP or other file in an\n"
      "image feature is a problem; the record's source file is named.\n\n"
      "Prints one line per problem as FILE:OFFSET: what is wrong, then a summary.\n"
      "With --salvage OUTDIR, the good records of damaged shards are written to\n"
      "new shards of the same names in OUTDIR; nothing is modified in place (an\n"
      "OUTDIR where that would replace an input shard is refused).\n\n"
      "Temporary files that interrupted shardfeed runs left beside the shards are\n"
      "listed as warnings (JSON: \"leftovers\"); they do not change the exit status.");
  bool raw = false, json = false, overwrite = false, quiet = false, decode = false,
       no_decode = false;
  int64_t threads = 0;
  std::string salvage;
  flags.AddBool("raw", &raw, "do not parse records as Examples (framing and CRCs only)");
  flags.AddBool("json", &json, "print the report as one JSON document on stdout");
  flags.AddBool("decode", &decode,
                "decode every JPEG/PNG image whole (default for datasets made by\n"
                "                            `convert image-folder`; elsewhere header checks)");
  flags.AddBool("no-decode", &no_decode,
                "only header checks of images and audio (also for image-folder datasets)");
  flags.AddString("salvage", &salvage, "write the good records of damaged shards here", "OUTDIR");
  flags.AddBool("overwrite", &overwrite, "let --salvage replace files in OUTDIR");
  flags.AddInt("threads", &threads, "shards checked in parallel (0: one per core)", "N",
               {0, kMaxThreads});
  flags.AddBool("quiet", &quiet, "print only problems (no summary)");
  std::vector<std::string> paths;
  if (absl::Status s = flags.Parse(argc, argv, &paths); !s.ok()) return ReportError("check", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (paths.empty()) {
    return ReportError("check", absl::InvalidArgumentError("no PATH given (see --help)"));
  }
  if (decode && no_decode) {
    return ReportError("check", absl::InvalidArgumentError("give --decode or --no-decode, not both"));
  }
  CheckOptions o;
  o.raw = raw;
  o.decode = decode ? 1 : no_decode ? 0 : -1;
  o.threads = static_cast<int>(threads);
  o.salvage_dir = salvage;
  o.overwrite = overwrite;
  ProgressLine line;
  o.progress = [&line](uint64_t done, uint64_t total) { line.UpdateBytes("check", done, total); };
  auto report = Check(paths, o);
  line.Finish();
  if (!report.ok()) return ReportError("check", report.status(), json);
  if (json) {
    std::printf("%s\n", ReportToJson(*report).c_str());
  } else {
    for (const auto& p : report->problems) std::printf("%s\n", FormatProblem(p).c_str());
    for (const auto& s : report->shards) {
      if (!s.salvaged) continue;
      std::string ranges;
      for (auto [b, e] : s.salvage.dropped_ranges) ranges += absl::StrFormat(" [%d, %d)", b, e);
      std::printf("salvaged %s -> %s: kept %s, dropped %s in %s:%s\n", s.path.c_str(),
                  s.salvage.output.c_str(), Plural(s.salvage.records_kept, "record").c_str(),
                  s.salvage.records_dropped >= 0 ? Plural(s.salvage.records_dropped, "record").c_str()
                                                 : "an unknown number of records",
                  Plural(s.salvage.regions_dropped, "region").c_str(), ranges.c_str());
    }
    if (!report->salvage_manifest.empty()) {
      std::printf("wrote %s: the salvaged shards with the dataset's schema\n",
                  report->salvage_manifest.c_str());
    }
    for (const auto& f : report->leftovers) {
      std::printf("warning: %s: a temporary file an interrupted shardfeed run left (not part of "
                  "the dataset; safe to delete)\n",
                  f.c_str());
    }
    if (!quiet) {
      for (const auto& n : report->notes) std::printf("note: %s\n", FormatProblem(n).c_str());
      for (const SchemaReport& schema : report->schemas) PrintSchema(schema);
      std::printf("%-8s %10s %12s %10s %9s\n", "shards", "records", "bytes", "MB/s", "problems");
      std::printf("%-8zu %10lld %12llu %10.1f %9zu\n", report->shards.size(),
                  static_cast<long long>(report->records),
                  static_cast<unsigned long long>(report->bytes),
                  report->bytes / 1e6 / std::max(report->seconds, 1e-9), report->problems.size());
      std::printf("%s\n", report->problems.empty() ? "OK: no problems found"
                                                   : "PROBLEMS FOUND: do not train on these shards as they are");
    }
  }
  return report->problems.empty() ? kExitOk : kExitDataProblem;
}

}  // namespace shardfeed::cli
