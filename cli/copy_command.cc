// shardfeed copy: re-encodes records into one new file, verifying every CRC.
#include <sys/stat.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "converter/bucket_output.h"
#include "converter/output_dir.h"
#include "reader/shard_selection.h"
#include "record/index.h"
#include "record/record_reader.h"
#include "record/record_writer.h"
#include "record/remote/upload.h"
#include "record/file.h"
#include "record/storage.h"
#include "record/status_macros.h"

namespace shardfeed::cli {
namespace {

uint64_t TotalFileBytes(const std::vector<std::string>& paths) {
  uint64_t total = 0;
  for (const std::string& p : paths) {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

// Progress is in bytes of the inputs on disk, advancing within each file;
// Ctrl-C stops between records (the writer removes its temporary).
absl::Status CopyAll(const std::vector<std::string>& inputs, RecordWriter* writer) {
  ProgressLine line;
  const uint64_t total = TotalFileBytes(inputs);
  uint64_t done_before = 0;  // bytes of the inputs already copied
  for (const std::string& input : inputs) {
    ASSIGN_OR_RETURN(auto reader, RecordReader::Open(input));
    absl::string_view record;
    for (;;) {
      if (Interrupted()) return absl::CancelledError("interrupted");
      absl::Status s = reader->ReadRecord(&record);
      if (absl::IsOutOfRange(s)) break;
      RETURN_IF_ERROR(s);
      RETURN_IF_ERROR(writer->WriteRecord(record));
      line.UpdateBytes("copy", done_before + reader->file_position(), total);
    }
    done_before += reader->file_size();
  }
  return absl::OkStatus();
}

// The staged copy (and its index, first) uploaded to `output`; on failure
// the index is deleted again (the copy itself appears whole or not at all).
absl::Status UploadCopy(const std::string& staged, const std::string& output, bool index) {
  ASSIGN_OR_RETURN(remote::UploadOptions o, remote::UploadOptions::FromEnvironment());
  if (index) RETURN_IF_ERROR(remote::UploadFile(IndexPathFor(staged), IndexPathFor(output), o));
  absl::Status s = remote::UploadFile(staged, output, o);
  if (!s.ok() && index) (void)remote::DeleteObject(IndexPathFor(output), /*retry=*/false);
  return s;
}

}  // namespace

int RunCopy(int argc, char** argv) {
  FlagParser flags(
      "shardfeed copy [flags] IN... --output OUT",
      "Copies the records of every shard IN names, in order, into the single file\n"
      "OUT, re-encoding them (e.g. GZIP to NONE), and verifying every CRC on the\n"
      "way. OUT appears only when complete: a corrupt input leaves nothing behind.\n"
      "IN is named as for check and bench: a shard, a quoted glob, a folder of\n"
      "shards, a dataset folder or its manifest.json (several splits: --split,\n"
      "'train' by default).\n\n"
      "OUT may be an object, s3://BUCKET/KEY or gs://: the file (and OUT.index) is\n"
      "written under $TMPDIR, then uploaded (index first); an existing object is\n"
      "replaced only with --overwrite.");
  std::string output, compression = "none", split;
  int64_t level = -1;
  bool overwrite = false, index = false;
  flags.AddString("output", &output, "the file to write (required)", "OUT");
  flags.AddString("compression", &compression, "none, zlib or gzip", "TYPE");
  flags.AddInt("compression-level", &level, "zlib level 0..9, -1 for zlib's default", "N",
               {-1, 9});
  flags.AddBool("overwrite", &overwrite, "replace OUT if it exists");
  flags.AddBool("index", &index,
                "also write OUT.index (for ZLIB/GZIP: offsets in the decompressed\n"
                "                            stream, as `shardfeed index` writes them)");
  flags.AddString("split", &split, "only this split of a dataset (e.g. train)", "NAME");
  std::vector<std::string> paths;
  if (absl::Status s = flags.Parse(argc, argv, &paths); !s.ok()) return ReportError("copy", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (paths.empty() || output.empty()) {
    return ReportError("copy", absl::InvalidArgumentError(
                                   "need at least one IN and --output OUT (see --help)"));
  }
  auto parsed = ParseCompression(compression);
  if (!parsed.ok()) return ReportError("copy", parsed.status());
  if (*parsed == Compression::kAuto) {
    return ReportError("copy", absl::InvalidArgumentError(
                                   "--compression for the output must be none, zlib or gzip"));
  }
  auto selected = SelectShards(paths, split);
  if (!selected.ok()) return ReportError("copy", selected.status());
  for (const std::string& n : selected->notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  std::vector<std::string> inputs;
  for (const SelectedShard& s : selected->shards) inputs.push_back(s.path);
  // A bucket output: written into a staging folder, uploaded at the end.
  std::optional<StagingFolder> staging;
  std::string target = output;
  if (IsRemotePath(output)) {
    if (!overwrite) {
      absl::StatusOr<bool> exists = ExistsOrError(output);  // a failed HEAD is not "absent"
      if (!exists.ok()) return ReportError("copy", exists.status());
      if (*exists) {
        return ReportError("copy", absl::AlreadyExistsError(absl::StrCat(
                                       output, ": already exists (use --overwrite to replace it)")));
      }
    }
    auto folder = StagingFolder::Create();
    if (!folder.ok()) return ReportError("copy", folder.status());
    staging = *std::move(folder);
    target = absl::StrCat(staging->path(), "/", output.substr(output.rfind('/') + 1));
  }
  RecordWriterOptions options;
  options.compression = *parsed;
  options.compression_level = static_cast<int>(level);
  options.overwrite = overwrite;
  auto writer = RecordWriter::Create(target, options);
  if (!writer.ok()) return ReportError("copy", writer.status());
  InstallInterruptHandler();
  absl::Status s = CopyAll(inputs, writer->get());
  if (!s.ok()) return ReportError("copy", s);  // the writer removes its temporary
  const std::vector<IndexEntry> entries = (*writer)->index();
  s = (*writer)->Close();
  if (!s.ok()) return ReportError("copy", s);
  if (index) {
    s = WriteIndexFile(IndexPathFor(target), entries);
    if (!s.ok()) return ReportError("copy", s);
  }
  if (staging.has_value()) {
    s = UploadCopy(target, output, index);
    if (!s.ok()) return ReportError("copy", s);
  }
  const uint64_t records = entries.size();
  std::fprintf(stderr, "copied %llu %s into %s (%s)\n",
               static_cast<unsigned long long>(records), records == 1 ? "record" : "records",
               output.c_str(),
               CompressionName(*parsed));
  return kExitOk;
}

}  // namespace shardfeed::cli
