// shardfeed cat: prints the records of TFRecord files, one JSON line each.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/record_json.h"
#include "reader/dataset.h"
#include "reader/decoder.h"
#include "reader/fingerprint.h"
#include "reader/shard_selection.h"
#include "record/record_reader.h"

namespace shardfeed::cli {
namespace {

// Decodes every record in order with the spec and fingerprints the values:
// the sequential reference for `shardfeed bench --fingerprint`.
absl::Status PrintFingerprint(const std::vector<std::string>& paths, const std::string& split,
                              const std::string& spec_text) {
  auto ds = Dataset::Open(paths, split);
  if (!ds.ok()) return ds.status();
  for (const std::string& n : ds->notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  std::vector<FeatureSpec> spec;
  if (!spec_text.empty()) {
    auto parsed = ParseSpec(spec_text);
    if (!parsed.ok()) return parsed.status();
    spec = *parsed;
  } else if (ds->manifest.has_value()) {
    spec = SpecFromManifest(*ds->manifest);
  } else {
    return absl::InvalidArgumentError("--fingerprint needs --spec (or a dataset with a manifest)");
  }
  std::vector<std::string> storage(spec.size());
  std::vector<std::string> var_storage(spec.size());
  std::vector<char*> fixed(spec.size());
  std::vector<std::string*> var(spec.size());
  for (size_t f = 0; f < spec.size(); ++f) {
    storage[f].resize(spec[f].variable_length ? 0 : spec[f].row_bytes());
    fixed[f] = storage[f].data();
    var[f] = &var_storage[f];
  }
  Fingerprint fp;
  std::vector<absl::string_view> parts(spec.size());
  for (const ShardEntry& shard : ds->shards) {
    auto reader = RecordReader::Open(shard.path);
    if (!reader.ok()) return reader.status();
    absl::string_view record;
    for (;;) {
      absl::Status s = (*reader)->ReadRecord(&record);
      if (absl::IsOutOfRange(s)) break;
      if (!s.ok()) return s;
      for (auto& v : var_storage) v.clear();
      s = DecodeExampleRow(record, spec, fixed.data(), var.data());
      if (!s.ok()) {
        return absl::DataLossError(absl::StrCat(shard.path, ":", (*reader)->last_record_offset(),
                                                ": ", s.message()));
      }
      for (size_t f = 0; f < spec.size(); ++f) {
        parts[f] = spec[f].variable_length ? absl::string_view(var_storage[f])
                                           : absl::string_view(storage[f]);
      }
      fp.Add(RecordHash(parts));
    }
  }
  std::printf("%s\n", fp.ToString().c_str());
  return absl::OkStatus();
}

}  // namespace

int RunCat(int argc, char** argv) {
  FlagParser flags(
      "shardfeed cat [flags] PATH...",
      "Prints every record of the shards PATH names (NONE, ZLIB or GZIP; detected\n"
      "automatically) as one line of JSON: the Example in protobuf's canonical\n"
      "JSON mapping when the record is one, otherwise its bytes as a base64\n"
      "string. Every CRC is verified; a corrupt record stops with its file and\n"
      "offset. PATH is named as for check and bench: a shard, a quoted glob, a\n"
      "folder of shards, a dataset folder or its manifest.json (a dataset with\n"
      "several splits: --split, 'train' by default).");
  bool raw = false, count = false;
  std::string compression = "auto", split;
  flags.AddBool("raw", &raw, "print every record as base64 bytes, even Examples");
  flags.AddBool("count", &count, "print only 'FILE N' per file and 'total N'");
  flags.AddString("compression", &compression, "auto, none, zlib or gzip", "TYPE");
  bool fingerprint = false;
  std::string spec;
  flags.AddBool("fingerprint", &fingerprint,
                "decode every record (with --spec, or the manifest's schema) and print the\n"
                "                            count and order-independent fingerprint (see bench)");
  flags.AddString("spec", &spec, "feature spec for --fingerprint", "SPEC");
  flags.AddString("split", &split, "only this split of a dataset (e.g. train)", "NAME");
  std::vector<std::string> paths;
  if (absl::Status s = flags.Parse(argc, argv, &paths); !s.ok()) return ReportError("cat", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (paths.empty()) {
    return ReportError("cat", absl::InvalidArgumentError("no PATH given (see --help)"));
  }
  if (fingerprint) {
    absl::Status s = PrintFingerprint(paths, split, spec);
    return s.ok() ? kExitOk : ReportError("cat", s);
  }
  auto parsed = ParseCompression(compression);
  if (!parsed.ok()) return ReportError("cat", parsed.status());
  auto selected = SelectShards(paths, split);
  if (!selected.ok()) return ReportError("cat", selected.status());
  for (const std::string& n : selected->notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  RecordReaderOptions options;
  options.compression = *parsed;

  uint64_t total = 0;
  std::string line;
  for (const SelectedShard& shard : selected->shards) {
    const std::string& file = shard.path;
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
