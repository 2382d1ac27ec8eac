// FormatProblem and ReportToJson (check.h): the report as text lines and as
// one JSON document.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "check/check.h"
#include "record/json_text.h"

namespace shardfeed {
namespace {

std::string ProblemsToJson(const std::vector<CheckProblem>& list) {
  std::string out;
  for (const auto& p : list) {
    absl::StrAppend(&out, out.empty() ? "" : ",",
                    absl::StrFormat(R"({"file":%s,"offset":%d,"what":%s,"source":%s,"line":%s})",
                                    JsonQuoted(p.file), p.offset, JsonQuoted(p.what),
                                    JsonQuoted(p.source), JsonQuoted(FormatProblem(p))));
  }
  return out;
}

std::string SchemasToJson(const std::vector<SchemaReport>& schemas) {
  std::string out;
  for (const SchemaReport& s : schemas) {
    std::string features;
    for (const FeatureSchema& f : s.features) {
      std::string shape;
      for (int64_t d : f.shape()) absl::StrAppend(&shape, shape.empty() ? "" : ",", d);
      absl::StrAppend(
          &features, features.empty() ? "" : ",",
          absl::StrFormat(
              R"({"name":%s,"kind":%s,"length":%d,"optional":%s,"dtype":%s,"shape":[%s],"description":%s})",
              JsonQuoted(f.name()), JsonQuoted(f.kind()), f.length(), f.optional() ? "true" : "false",
              JsonQuoted(f.dtype()), shape, JsonQuoted(f.description())));
    }
    std::vector<std::string> lists;
    for (const auto& k : s.feature_lists) lists.push_back(JsonQuoted(k));
    absl::StrAppend(&out, out.empty() ? "" : ",",
                    absl::StrFormat(R"({"source":%s,"inferred":%s,"features":[%s],"feature_lists":[%s]})",
                                    JsonQuoted(s.source), s.inferred ? "true" : "false", features,
                                    absl::StrJoin(lists, ",")));
  }
  return out;
}

}  // namespace

std::string FormatProblem(const CheckProblem& p) {
  const std::string source = p.source.empty() ? "" : absl::StrCat(" (source file: ", p.source, ")");
  if (p.offset < 0) return absl::StrCat(p.file, ": ", p.what, source);
  return absl::StrCat(p.file, ":", p.offset, ": ", p.what, source);
}

std::string ReportToJson(const CheckReport& r) {
  std::string shards;
  for (const auto& s : r.shards) {
    std::string salvage = "null";
    if (s.salvaged) {
      std::string ranges;
      for (auto [b, e] : s.salvage.dropped_ranges) {
        absl::StrAppend(&ranges, ranges.empty() ? "" : ",", "[", b, ",", e, "]");
      }
      salvage = absl::StrFormat(
          R"({"output":%s,"records_kept":%d,"records_dropped":%d,"regions_dropped":%d,"dropped_ranges":[%s]})",
          JsonQuoted(s.salvage.output), s.salvage.records_kept, s.salvage.records_dropped,
          s.salvage.regions_dropped, ranges);
    }
    absl::StrAppend(
        &shards, shards.empty() ? "" : ",",
        absl::StrFormat(R"({"file":%s,"records":%d,"bytes":%d,"damaged":%s,"empty":%s,"salvage":%s})",
                        JsonQuoted(s.path), s.records, s.bytes, s.damaged ? "true" : "false",
                        s.empty ? "true" : "false", salvage));
  }
  std::vector<std::string> leftovers;
  for (const auto& f : r.leftovers) leftovers.push_back(JsonQuoted(f));
  return absl::StrFormat(
      R"({"ok":%s,"shards":%d,"records":%d,"bytes":%d,"seconds":%.3f,"mb_per_s":%.1f,"manifest":%s,"problems":[%s],"notes":[%s],"schemas":[%s],"shard_results":[%s],"leftovers":[%s],"salvage_manifest":%s})",
      r.problems.empty() ? "true" : "false", r.shards.size(), r.records, r.bytes, r.seconds,
      r.bytes / 1e6 / std::max(r.seconds, 1e-9), JsonQuoted(r.manifest), ProblemsToJson(r.problems),
      ProblemsToJson(r.notes), SchemasToJson(r.schemas), shards, absl::StrJoin(leftovers, ","),
      JsonQuoted(r.salvage_manifest));
}

}  // namespace shardfeed
