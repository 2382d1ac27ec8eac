#include "converter/schema_fold.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace shardfeed {
namespace {

bool SameShape(const FeatureSchema& a, const FeatureSchema& b) {
  if (a.shape_size() != b.shape_size()) return false;
  for (int i = 0; i < a.shape_size(); ++i) {
    if (a.shape(i) != b.shape(i)) return false;
  }
  return true;
}

// A feature's kind as a message says it: float64 tensors are bytes on the
// wire, but the user wrote float64.
const std::string& KindWord(const FeatureSchema& f) {
  return f.dtype() == "float64" ? f.dtype() : f.kind();
}

}  // namespace

absl::Status FoldFeature(FeatureSchema* known, const FeatureSchema& seen) {
  if (known->kind() != seen.kind()) {
    return absl::InvalidArgumentError(absl::StrCat("feature '", seen.name(), "' is ",
                                                   KindWord(seen), " here but ", KindWord(*known),
                                                   " before"));
  }
  const bool float64 = known->dtype() == "float64" || seen.dtype() == "float64";
  if (known->kind() == "bytes" && float64 && known->dtype() != seen.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feature '", seen.name(), "' is ", seen.dtype().empty() ? "bytes" : seen.dtype(),
        " here but ", known->dtype().empty() ? "bytes" : known->dtype(), " before"));
  }
  if (seen.optional()) known->set_optional(true);
  if (known->kind() == "bytes" && float64) {  // raw doubles: keep the dtype
    if (!SameShape(*known, seen)) {
      known->clear_shape();
      known->add_shape(-1);  // varies: variable-length float64
    }
    return absl::OkStatus();
  }
  if (known->length() != seen.length()) known->set_length(0);
  if (known->dtype() != seen.dtype() || !SameShape(*known, seen) || known->length() == 0) {
    known->clear_shape();
    // A bytes feature's dtype describes a raw tensor of a fixed shape.
    if (known->dtype() != seen.dtype() || known->kind() == "bytes") known->clear_dtype();
  }
  return absl::OkStatus();
}

absl::Status FoldSchema(std::vector<FeatureSchema>* known, const std::vector<FeatureSchema>& seen,
                        bool first) {
  std::vector<bool> matched(known->size(), false);
  for (const FeatureSchema& f : seen) {
    bool found = false;
    for (size_t i = 0; i < matched.size(); ++i) {
      FeatureSchema& k = (*known)[i];
      if (k.name() == f.name()) {
        found = matched[i] = true;
        absl::Status s = FoldFeature(&k, f);
        if (!s.ok()) return s;
        break;
      }
    }
    if (!found) {
      known->push_back(f);
      if (!first) known->back().set_optional(true);  // earlier records lack it
    }
  }
  for (size_t i = 0; i < matched.size(); ++i) {
    if (!matched[i]) (*known)[i].set_optional(true);  // this record lacks it
  }
  return absl::OkStatus();
}

}  // namespace shardfeed
