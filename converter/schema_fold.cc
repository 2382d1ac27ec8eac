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

}  // namespace

absl::Status FoldFeature(FeatureSchema* known, const FeatureSchema& seen) {
  if (known->kind() != seen.kind()) {
    return absl::InvalidArgumentError(absl::StrCat("feature '", seen.name(), "' is ", seen.kind(),
                                                   " here but ", known->kind(), " before"));
  }
  if (seen.optional()) known->set_optional(true);
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
