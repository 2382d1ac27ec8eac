#include "check/schema.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace shardfeed {
namespace {

FeatureKind KindFromName(const std::string& name) {
  if (name == "bytes") return FeatureKind::kBytes;
  if (name == "float") return FeatureKind::kFloat;
  if (name == "int64") return FeatureKind::kInt64;
  return FeatureKind::kNone;
}

struct Observed {
  FeatureKind kind;
  int64_t count;
  int64_t byte_length;  // of the single bytes value, else -1
};

}  // namespace

Schema SchemaFromManifest(const Manifest& manifest) {
  Schema schema;
  for (const FeatureSchema& f : manifest.features()) {
    FeatureRule rule;
    rule.kind = KindFromName(f.kind());
    rule.optional = f.optional();
    rule.count = f.length() > 0 ? f.length() : -1;
    // A raw tensor (uint8, or float64 from the Python Writer) of a fixed
    // shape: one bytes value of exactly that many bytes.
    const int64_t element = f.dtype() == "uint8" ? 1 : f.dtype() == "float64" ? 8 : 0;
    const bool fixed = std::all_of(f.shape().begin(), f.shape().end(), [](int64_t d) { return d >= 0; });
    if (element > 0 && fixed && (f.shape_size() > 0 || element == 8) && rule.count == 1) {
      int64_t n = element;
      for (int64_t d : f.shape()) n *= d;
      rule.byte_length = n;
    }
    schema[f.name()] = rule;
  }
  return schema;
}

std::string SchemaProblem(absl::string_view record, const Schema& schema) {
  // Allocation-free on the clean path: keys are views into the record;
  // a repeated key replaces the earlier one (last wins, as in protobuf).
  absl::InlinedVector<std::pair<absl::string_view, Observed>, 16> observed;
  std::vector<absl::string_view> feature_lists;  // a SequenceExample's: not part of the schema
  absl::Status walked = WalkExampleOrSequence(record, [&](absl::string_view key, const FeatureView& f) {
    int64_t count = 0, bytes = 0;
    absl::Status st = CountValues(f, &count, &bytes);
    if (!st.ok()) return st;
    const Observed o{f.kind, count, f.kind == FeatureKind::kBytes && count == 1 ? bytes : -1};
    for (auto& [k, v] : observed) {
      if (k == key) {
        v = o;
        return absl::OkStatus();
      }
    }
    observed.emplace_back(key, o);
    return absl::OkStatus();
  }, &feature_lists);
  if (!walked.ok()) return absl::StrCat("not an Example: ", walked.message());
  if (schema.empty()) return "";
  std::vector<std::string> problems;
  size_t matched = 0;
  for (const auto& [key, rule] : schema) {
    const Observed* found = nullptr;
    for (const auto& [k, v] : observed) {
      if (k == key) found = &v;
    }
    if (found == nullptr) {
      if (rule.optional) continue;
      problems.push_back(absl::StrCat("missing feature '", key, "'"));
      continue;
    }
    ++matched;
    const Observed& o = *found;
    if (o.kind == FeatureKind::kNone) continue;  // an empty Feature: a missing value
    if (rule.kind != FeatureKind::kNone && o.kind != rule.kind) {
      problems.push_back(absl::StrCat("feature '", key, "' is ", FeatureKindName(o.kind),
                                      ", expected ", FeatureKindName(rule.kind)));
    } else if (rule.count >= 0 && o.count != rule.count) {
      problems.push_back(absl::StrCat("feature '", key, "' has ", o.count, " values, expected ",
                                      rule.count));
    } else if (rule.byte_length >= 0 && o.byte_length != rule.byte_length) {
      problems.push_back(absl::StrCat("feature '", key, "' is ", o.byte_length,
                                      " bytes long, expected ", rule.byte_length));
    }
  }
  if (matched < observed.size()) {
    std::vector<absl::string_view> unexpected;
    for (const auto& [k, v] : observed) {
      if (schema.find(k) == schema.end()) unexpected.push_back(k);
    }
    std::sort(unexpected.begin(), unexpected.end());
    for (absl::string_view k : unexpected) {
      problems.push_back(absl::StrCat("unexpected feature '", k, "'"));
    }
  }
  return absl::StrJoin(problems, "; ");
}

}  // namespace shardfeed
