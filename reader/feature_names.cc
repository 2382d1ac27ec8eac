#include "reader/feature_names.h"

#include <algorithm>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "reader/decoder.h"
#include "reader/example_wire.h"
#include "record/record_reader.h"

namespace shardfeed {
namespace {

// What the dataset says about one feature.
struct Known {
  std::string kind;      // "bytes", "int64", "float" ("" unknown)
  int64_t length = 0;    // values per record (0: variable or unknown)
  int64_t raw_bytes = 0;  // a raw tensor's bytes per record (0: not one, or variable)
};

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

size_t DTypeBytes(const std::string& dtype) {
  if (dtype == "uint8") return 1;
  if (dtype == "float64") return 8;
  return 0;
}

std::map<std::string, Known> FromManifest(const Manifest& m) {
  std::map<std::string, Known> known;
  for (const FeatureSchema& f : m.features()) {
    Known k;
    k.kind = f.kind();
    k.length = f.length();
    const size_t element = DTypeBytes(f.dtype());
    if (f.kind() == "bytes" && element > 0 && f.shape_size() > 0) {
      int64_t n = static_cast<int64_t>(element);
      for (int64_t d : f.shape()) n = d > 0 ? n * d : 0;
      k.raw_bytes = n;
    }
    known[f.name()] = k;
  }
  return known;
}

// The features of the first record of the first shard with records; false
// when there is none or it cannot be read or walked.
bool FromSample(const Dataset& dataset, std::map<std::string, Known>* known, std::string* where) {
  for (const ShardEntry& shard : dataset.shards) {
    if (shard.records == 0) continue;
    absl::StatusOr<std::unique_ptr<RecordReader>> reader = RecordReader::Open(shard.path);
    if (!reader.ok()) return false;
    absl::string_view record;
    if (!(*reader)->ReadRecord(&record).ok()) return false;
    absl::Status walked = WalkExample(record, [&](absl::string_view key, const FeatureView& v) {
      (*known)[std::string(key)].kind =
          v.kind == FeatureKind::kNone ? "" : FeatureKindName(v.kind);
      return absl::OkStatus();
    });
    if (!walked.ok()) return false;
    *where = absl::StrCat("the first record of ", shard.path);
    return true;
  }
  return false;
}

std::string ListNames(const std::vector<std::string>& names) {
  constexpr size_t kShown = 30;
  std::vector<std::string> quoted;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) {
    quoted.push_back(absl::StrCat("'", names[i], "'"));
  }
  std::string list = absl::StrJoin(quoted, ", ");
  if (names.size() > kShown) absl::StrAppend(&list, " and ", names.size() - kShown, " more");
  return list.empty() ? "none" : list;
}

}  // namespace

std::string ClosestName(absl::string_view name, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& n : names) {
    const size_t d = EditDistance(name, n);
    if (best.empty() || d < best_distance) {
      best = n;
      best_distance = d;
    }
  }
  return best;
}

absl::Status CheckFeatureNames(const Dataset& dataset, const std::vector<FeatureSpec>& spec) {
  std::map<std::string, Known> known;
  std::string where;
  const bool manifest = dataset.manifest.has_value();
  if (manifest) {
    known = FromManifest(*dataset.manifest);
    where = "the manifest";
  } else if (!FromSample(dataset, &known, &where)) {
    return absl::OkStatus();  // nothing to check against
  }
  std::vector<std::string> names;
  for (const auto& [name, k] : known) names.push_back(name);
  for (const FeatureSpec& f : spec) {
    if (f.decode.kind == DecodeKind::kLengthOf) continue;  // made by the loader
    auto it = known.find(f.name);
    if (it == known.end()) {
      if (!manifest && f.has_default) continue;  // maybe optional
      const std::string closest = ClosestName(f.name, names);
      return absl::InvalidArgumentError(absl::StrCat(
          "feature '", f.name, "' is not in the dataset (", where, " has ", ListNames(names), ")",
          closest.empty() ? "" : absl::StrCat(": did you mean '", closest, "'?"),
          manifest ? "" : " (a feature missing from some records needs a default: NAME:TYPE=0)"));
    }
    const Known& k = it->second;
    const std::string want = FeatureKindName(WireKind(f));
    if (!k.kind.empty() && k.kind != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feature '", f.name, "': the spec reads it as ", want, " (", SpecToString({f}), "), ",
          where, " says it is ", k.kind));
    }
    const bool padded = f.decode.kind == DecodeKind::kInt64List ||
                        f.decode.kind == DecodeKind::kFloatList;
    if (!manifest || f.variable_length || padded || f.decode.kind != DecodeKind::kNone) continue;
    if (!IsRawBytes(f) && k.length > 0 && f.elements() != k.length) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feature '", f.name, "': the spec asks for ", f.elements(), " value",
          f.elements() == 1 ? "" : "s", " (", SpecToString({f}), "), the manifest says every "
          "record has ", k.length, " (for a varying count write TYPE[])"));
    }
    if (IsRawBytes(f) && k.raw_bytes > 0 && static_cast<int64_t>(f.row_bytes()) != k.raw_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feature '", f.name, "': the spec's ", SpecToString({f}), " is ", f.row_bytes(),
          " bytes a record, the manifest's tensor ", k.raw_bytes));
    }
  }
  return absl::OkStatus();
}

}  // namespace shardfeed
