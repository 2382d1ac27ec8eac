#include "converter/example_encoder.h"

#include <cstring>

namespace shardfeed {
namespace {

// Wire types.
constexpr int kVarint = 0;
constexpr int kLengthDelimited = 2;

void AppendTag(std::string* out, int field, int wire_type) {
  AppendVarint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void AppendLengthDelimited(std::string* out, int field, absl::string_view bytes) {
  AppendTag(out, field, kLengthDelimited);
  AppendVarint(out, bytes.size());
  out->append(bytes.data(), bytes.size());
}

}  // namespace

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}

// Feature { bytes_list = 1 | float_list = 2 | int64_list = 3 }; each list's
// values are field 1 (packed for numbers).
void ExampleEncoder::AddBytes(absl::string_view key, absl::string_view value) {
  std::string list;
  list.reserve(value.size() + 8);
  AppendLengthDelimited(&list, 1, value);
  std::string feature;
  feature.reserve(list.size() + 8);
  AppendLengthDelimited(&feature, 1, list);
  features_[std::string(key)] = std::move(feature);
}

void ExampleEncoder::AddBytesList(absl::string_view key, absl::Span<const std::string> values) {
  std::string list;
  for (const std::string& v : values) AppendLengthDelimited(&list, 1, v);
  std::string feature;
  AppendLengthDelimited(&feature, 1, list);
  features_[std::string(key)] = std::move(feature);
}

void ExampleEncoder::AddInt64(absl::string_view key, int64_t value) {
  AddInt64List(key, absl::MakeConstSpan(&value, 1));
}

void ExampleEncoder::AddInt64List(absl::string_view key, absl::Span<const int64_t> values) {
  std::string packed;
  for (int64_t v : values) AppendVarint(&packed, static_cast<uint64_t>(v));
  std::string list;
  if (!values.empty()) AppendLengthDelimited(&list, 1, packed);
  std::string feature;
  AppendLengthDelimited(&feature, 3, list);
  features_[std::string(key)] = std::move(feature);
}

void ExampleEncoder::AddFloatList(absl::string_view key, absl::Span<const float> values) {
  std::string packed(values.size() * 4, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b) packed[i * 4 + b] = static_cast<char>(bits >> (8 * b));
  }
  std::string list;
  if (!values.empty()) AppendLengthDelimited(&list, 1, packed);
  std::string feature;
  AppendLengthDelimited(&feature, 2, list);
  features_[std::string(key)] = std::move(feature);
}

std::string ExampleEncoder::Finish() {
  // Features { map<string, Feature> feature = 1 }: each entry is a message
  // { key = 1; value = 2 }.
  size_t features_size = 0;
  for (const auto& [key, feature] : features_) {
    size_t entry = 1 + VarintSize(key.size()) + key.size() + 1 + VarintSize(feature.size()) +
                   feature.size();
    features_size += 1 + VarintSize(entry) + entry;
  }
  std::string out;
  out.reserve(features_size + 8);
  AppendTag(&out, 1, kLengthDelimited);  // Example.features
  AppendVarint(&out, features_size);
  for (const auto& [key, feature] : features_) {
    size_t entry = 1 + VarintSize(key.size()) + key.size() + 1 + VarintSize(feature.size()) +
                   feature.size();
    AppendTag(&out, 1, kLengthDelimited);
    AppendVarint(&out, entry);
    AppendLengthDelimited(&out, 1, key);
    AppendLengthDelimited(&out, 2, feature);
  }
  features_.clear();
  return out;
}

}  // namespace shardfeed
