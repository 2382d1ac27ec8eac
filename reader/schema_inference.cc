#include "reader/schema_inference.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

namespace shardfeed {

int64_t FeatureStats::present() const {
  return records[1] + records[2] + records[3];
}

FeatureKind FeatureStats::kind() const {
  int best = 0;
  for (int k = 1; k <= 3; ++k) {
    if (records[k] > records[best] || (best == 0 && records[k] > 0)) best = k;
  }
  return static_cast<FeatureKind>(best);
}

bool FeatureStats::conflicting() const {
  return (records[1] > 0) + (records[2] > 0) + (records[3] > 0) > 1;
}

absl::Status SchemaInference::Add(absl::string_view record, int64_t offset) {
  struct Seen {
    absl::string_view key;
    FeatureKind kind;
    int64_t values;
  };
  // Collected first so that a record that turns out malformed adds nothing;
  // a repeated key: the last one wins, as in protobuf.
  absl::InlinedVector<Seen, 16> seen;
  std::vector<absl::string_view> lists;
  absl::Status s = WalkExampleOrSequence(
      record,
      [&](absl::string_view key, const FeatureView& f) {
        int64_t count = 0, bytes = 0;
        absl::Status st = CountValues(f, &count, &bytes);
        if (!st.ok()) return st;
        for (Seen& x : seen) {
          if (x.key == key) {
            x = {key, f.kind, count};
            return absl::OkStatus();
          }
        }
        seen.push_back({key, f.kind, count});
        return absl::OkStatus();
      },
      &lists);
  if (!s.ok()) return s;
  ++records_;
  for (const Seen& x : seen) {
    auto it = features_.find(x.key);
    if (it == features_.end()) it = features_.emplace(std::string(x.key), FeatureStats()).first;
    FeatureStats& st = it->second;
    const int k = static_cast<int>(x.kind);
    if (st.records[k]++ == 0) st.first_offset[k] = offset;
    if (x.kind != FeatureKind::kNone) {
      st.min_values = std::min(st.min_values, x.values);
      st.max_values = std::max(st.max_values, x.values);
    }
  }
  std::sort(lists.begin(), lists.end());
  lists.erase(std::unique(lists.begin(), lists.end()), lists.end());
  for (absl::string_view key : lists) {
    auto it = feature_lists_.find(key);
    if (it == feature_lists_.end()) it = feature_lists_.emplace(std::string(key), 0).first;
    ++it->second;
  }
  return absl::OkStatus();
}

void SchemaInference::Merge(const SchemaInference& other) {
  records_ += other.records_;
  for (const auto& [key, o] : other.features_) {
    FeatureStats& st = features_[key];
    for (int k = 0; k < 4; ++k) {
      if (st.records[k] == 0) st.first_offset[k] = o.first_offset[k];
      st.records[k] += o.records[k];
    }
    st.min_values = std::min(st.min_values, o.min_values);
    st.max_values = std::max(st.max_values, o.max_values);
  }
  for (const auto& [key, n] : other.feature_lists_) feature_lists_[key] += n;
}

std::vector<FeatureSchema> SchemaInference::Schema() const {
  std::vector<FeatureSchema> out;
  for (const auto& [key, st] : features_) {
    FeatureSchema f;
    f.set_name(key);
    const FeatureKind kind = st.kind();
    f.set_kind(kind == FeatureKind::kNone ? "" : FeatureKindName(kind));
    const bool fixed = st.present() > 0 && st.min_values == st.max_values;
    f.set_length(fixed ? st.min_values : 0);
    f.set_optional(st.present() < records_);
    std::string seen = absl::StrCat("in ", st.present(), " of ", records_, " records");
    if (st.present() > 0 && !fixed) {
      absl::StrAppend(&seen, "; ", st.min_values, "..", st.max_values, " values");
    }
    if (st.conflicting()) {
      absl::StrAppend(&seen, "; kinds differ: ", st.records[1], " bytes, ", st.records[2],
                      " float, ", st.records[3], " int64");
    }
    f.set_description(absl::StrCat("inferred: ", seen));
    out.push_back(std::move(f));
  }
  return out;
}

std::string DescribeFeature(const FeatureSchema& f) {
  std::string line = absl::StrCat(f.name(), "  ", f.kind().empty() ? "(no values)" : f.kind(), "  ");
  if (f.length() > 0) {
    absl::StrAppend(&line, f.length(), f.length() == 1 ? " value" : " values");
  } else {
    absl::StrAppend(&line, "variable length");
  }
  if (f.dtype() != "") {
    absl::StrAppend(&line, " (", f.dtype(), " [");
    for (int i = 0; i < f.shape_size(); ++i) absl::StrAppend(&line, i ? ", " : "", f.shape(i));
    absl::StrAppend(&line, "])");
  }
  if (f.optional()) absl::StrAppend(&line, ", optional");
  if (!f.description().empty()) absl::StrAppend(&line, "  (", f.description(), ")");
  return line;
}

}  // namespace shardfeed
