#include "converter/example_encoder.h"

#include <algorithm>
#include <cstring>

#include "record/crc32c.h"
#include "record/record_format.h"

namespace shardfeed {
namespace {

constexpr int kLengthDelimited = 2;

void AppendTag(std::string* out, int field, int wire_type) {
  AppendVarint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void AppendHeader(std::string* out, int field, size_t length) {
  AppendTag(out, field, kLengthDelimited);
  AppendVarint(out, length);
}

size_t FieldSize(size_t length) { return 1 + VarintSize(length) + length; }

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

ExampleEncoder::Entry& ExampleEncoder::Slot(absl::string_view key, int list_field) {
  for (Entry& e : entries_) {
    if (e.key == key) {
      e = Entry{std::string(key), list_field, {}, {}, {}};
      return e;
    }
  }
  entries_.push_back(Entry{std::string(key), list_field, {}, {}, {}});
  return entries_.back();
}

void ExampleEncoder::AddBytes(absl::string_view key, absl::string_view value) {
  Slot(key, 1).bytes.push_back(value);
}

void ExampleEncoder::AddBytesList(absl::string_view key, absl::Span<const std::string> values) {
  Entry& e = Slot(key, 1);
  for (const std::string& v : values) e.bytes.push_back(v);
}

void ExampleEncoder::AddInt64(absl::string_view key, int64_t value) {
  AppendVarint(&Slot(key, 3).packed, static_cast<uint64_t>(value));
}

void ExampleEncoder::AddInt64List(absl::string_view key, absl::Span<const int64_t> values) {
  Entry& e = Slot(key, 3);
  for (int64_t v : values) AppendVarint(&e.packed, static_cast<uint64_t>(v));
}

void ExampleEncoder::AddFloatList(absl::string_view key, absl::Span<const float> values) {
  Entry& e = Slot(key, 2);
  e.packed.resize(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    EncodeFixed32(&e.packed[i * 4], bits);
  }
}

void ExampleEncoder::AddZeroBytes(absl::string_view key, size_t length) {
  Slot(key, 1).zero_bytes.push_back(length);
}

// BytesList/FloatList/Int64List { value = 1 } (numbers packed).
size_t ExampleEncoder::ListSize(const Entry& e) const {
  if (e.list_field != 1) return e.packed.empty() ? 0 : FieldSize(e.packed.size());
  size_t n = 0;
  for (absl::string_view v : e.bytes) n += FieldSize(v.size());
  for (size_t length : e.zero_bytes) n += FieldSize(length);
  return n;
}

// Example { Features features = 1 }; Features { map<string, Feature> = 1 }:
// each entry { key = 1; Feature value = 2 }; Feature { oneof list = 1|2|3 }.
size_t ExampleEncoder::Sizes(std::vector<size_t>* list_sizes, std::vector<size_t>* entry_sizes) {
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.key < b.key; });
  size_t features_size = 0;
  for (const Entry& e : entries_) {
    size_t list = ListSize(e);
    size_t feature = FieldSize(list);
    size_t entry = FieldSize(e.key.size()) + FieldSize(feature);
    list_sizes->push_back(list);
    entry_sizes->push_back(entry);
    features_size += FieldSize(entry);
  }
  return features_size;
}

size_t ExampleEncoder::FramedSize() {
  std::vector<size_t> list_sizes, entry_sizes;
  return kRecordHeaderSize + FieldSize(Sizes(&list_sizes, &entry_sizes)) + kRecordFooterSize;
}

std::string ExampleEncoder::Serialize(size_t reserve_front) {
  std::vector<size_t> list_sizes, entry_sizes;
  const size_t features_size = Sizes(&list_sizes, &entry_sizes);
  std::string out(reserve_front, '\0');
  out.reserve(reserve_front + FieldSize(features_size) + kRecordFooterSize);
  AppendHeader(&out, 1, features_size);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    AppendHeader(&out, 1, entry_sizes[i]);
    AppendHeader(&out, 1, e.key.size());
    out.append(e.key);
    AppendHeader(&out, 2, FieldSize(list_sizes[i]));
    AppendHeader(&out, e.list_field, list_sizes[i]);
    if (e.list_field == 1) {
      for (absl::string_view v : e.bytes) {
        AppendHeader(&out, 1, v.size());
        out.append(v.data(), v.size());
      }
      for (size_t length : e.zero_bytes) {
        AppendHeader(&out, 1, length);
        out.append(length, '\0');
      }
    } else if (!e.packed.empty()) {
      AppendHeader(&out, 1, e.packed.size());
      out.append(e.packed);
    }
  }
  entries_.clear();
  return out;
}

std::string ExampleEncoder::Finish() { return Serialize(0); }

std::string ExampleEncoder::FinishFramed() {
  std::string out = Serialize(kRecordHeaderSize);
  FrameInPlace(&out);
  return out;
}

std::string ExampleEncoder::FinishUnframed() { return Serialize(kRecordHeaderSize); }

void ExampleEncoder::FrameInPlace(std::string* out) {
  const size_t length = out->size() - kRecordHeaderSize;
  EncodeFixed64(&(*out)[0], length);
  EncodeFixed32(&(*out)[8], crc32c::Mask(crc32c::Value(out->data(), 8)));
  char footer[kRecordFooterSize];
  EncodeFixed32(footer, crc32c::Mask(crc32c::Value(out->data() + kRecordHeaderSize, length)));
  out->append(footer, sizeof(footer));
}

}  // namespace shardfeed
