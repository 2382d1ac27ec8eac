#include "reader/fingerprint.h"

#include "absl/strings/str_format.h"
#include "record/crc32c.h"

namespace shardfeed {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::string Fingerprint::ToString() const {
  return absl::StrFormat("records=%d fingerprint=%016x", records, sum);
}

uint64_t RecordHash(const std::vector<absl::string_view>& feature_bytes) {
  uint64_t h = 0x6a09e667f3bcc908ull;
  for (absl::string_view b : feature_bytes) {
    uint64_t part = (uint64_t{crc32c::Value(b.data(), b.size())} << 32) ^ b.size();
    h = Mix(h ^ part);
  }
  return h;
}

void AddRows(const std::vector<Tensor>& tensors, int64_t rows,
             const std::vector<FeatureSpec>& spec, Fingerprint* fp) {
  auto find = [&tensors](const std::string& name) -> const Tensor* {
    for (const Tensor& t : tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };
  std::vector<absl::string_view> parts(spec.size());
  for (int64_t row = 0; row < rows; ++row) {
    for (size_t f = 0; f < spec.size(); ++f) {
      const Tensor* t = find(spec[f].name);
      if (spec[f].variable_length) {
        const auto* offsets =  // in elements
            static_cast<const int64_t*>(find(spec[f].name + "/offsets")->data);
        const size_t element = DTypeSize(spec[f].dtype);
        parts[f] = absl::string_view(static_cast<const char*>(t->data) + offsets[row] * element,
                                     (offsets[row + 1] - offsets[row]) * element);
      } else {
        const size_t n = spec[f].row_bytes();
        parts[f] = absl::string_view(static_cast<const char*>(t->data) + row * n, n);
      }
    }
    fp->Add(RecordHash(parts));
  }
}

void AddBatch(const Batch& batch, const std::vector<FeatureSpec>& spec, Fingerprint* fp) {
  AddRows(batch.tensors(), batch.size(), spec, fp);
}

}  // namespace shardfeed
