#include "reader/example_wire.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace shardfeed {
namespace {

absl::Status Malformed(absl::string_view where) {
  return absl::InvalidArgumentError(absl::StrCat("malformed Example: ", where));
}

// Wire types.
constexpr uint32_t kVarint = 0, kFixed64 = 1, kLength = 2, kStartGroup = 3, kEndGroup = 4,
                   kFixed32 = 5;

}  // namespace

const char* FeatureKindName(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::kBytes:
      return "bytes";
    case FeatureKind::kFloat:
      return "float";
    case FeatureKind::kInt64:
      return "int64";
    case FeatureKind::kNone:
      return "none";
  }
  return "?";
}

bool WireReader::ReadVarintSlow(uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
    uint8_t b = static_cast<uint8_t>(*p_++);
    result |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) {
      *v = result;
      return true;
    }
  }
  return false;
}

bool WireReader::ReadTagSlow(uint32_t* field, uint32_t* wire_type) {
  // As protobuf does: a tag is at most 5 varint bytes, truncated to 32 bits.
  uint64_t tag = 0;
  int i = 0;
  for (;; ++i) {
    if (i == 5 || p_ >= end_) return false;
    uint8_t b = static_cast<uint8_t>(*p_++);
    tag |= uint64_t{b & 0x7fu} << (7 * i);
    if (b < 0x80) break;
  }
  tag &= 0xffffffffu;
  *field = static_cast<uint32_t>(tag >> 3);
  *wire_type = static_cast<uint32_t>(tag & 7);
  return *field != 0;
}

bool WireReader::ReadFixed32(uint32_t* v) {
  if (end_ - p_ < 4) return false;
  uint32_t x = 0;
  for (int i = 3; i >= 0; --i) x = (x << 8) | static_cast<uint8_t>(p_[i]);
  p_ += 4;
  *v = x;
  return true;
}

bool WireReader::Skip(uint32_t wire_type) {
  uint64_t v;
  absl::string_view s;
  switch (wire_type) {
    case kVarint:
      return ReadVarint(&v);
    case kFixed64:
      if (end_ - p_ < 8) return false;
      p_ += 8;
      return true;
    case kLength:
      return ReadLengthDelimited(&s);
    case kFixed32:
      if (end_ - p_ < 4) return false;
      p_ += 4;
      return true;
    case kStartGroup: {
      // Skip to the matching end-group tag.
      for (int depth = 1; depth > 0;) {
        uint32_t f, wt;
        if (!ReadTag(&f, &wt)) return false;
        if (wt == kStartGroup) ++depth;
        else if (wt == kEndGroup) --depth;
        else if (!Skip(wt)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

namespace {

// Feature { bytes_list = 1; float_list = 2; int64_list = 3 } (a oneof: the
// last kind seen wins; repeated occurrences of one kind merge).
absl::Status ParseFeature(absl::string_view bytes, FeatureView* f) {
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t field, wt;
    if (!r.ReadTag(&field, &wt)) return Malformed("bad tag in Feature");
    if (wt == kLength && field >= 1 && field <= 3) {
      absl::string_view list;
      if (!r.ReadLengthDelimited(&list)) return Malformed("bad list in Feature");
      FeatureKind kind = static_cast<FeatureKind>(field);
      if (kind != f->kind) {
        f->kind = kind;
        f->lists.clear();
      }
      f->lists.push_back(list);
    } else if (!r.Skip(wt)) {
      return Malformed("bad field in Feature");
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// The keys of FeatureLists { map<string, FeatureList> feature_list = 1; };
// false if `lists` is not one (then it is an Example's unknown field 2).
bool FeatureListKeys(absl::string_view lists, std::vector<absl::string_view>* keys) {
  WireReader r(lists);
  std::vector<absl::string_view> found;
  while (!r.done()) {
    uint32_t field, wt;
    if (!r.ReadTag(&field, &wt)) return false;
    if (field != 1 || wt != kLength) {
      if (!r.Skip(wt)) return false;
      continue;
    }
    absl::string_view entry, key;
    if (!r.ReadLengthDelimited(&entry)) return false;
    WireReader er(entry);
    while (!er.done()) {
      uint32_t ef, ewt;
      if (!er.ReadTag(&ef, &ewt)) return false;
      if (ef == 1 && ewt == kLength) {
        if (!er.ReadLengthDelimited(&key)) return false;
      } else if (!er.Skip(ewt)) {
        return false;
      }
    }
    found.push_back(key);
  }
  keys->insert(keys->end(), found.begin(), found.end());
  return true;
}

absl::Status WalkFeatures(absl::string_view features, const FeatureVisitor& visit) {
  WireReader fr(features);
  while (!fr.done()) {
    uint32_t ff, fwt;
    if (!fr.ReadTag(&ff, &fwt)) return Malformed("bad tag in Features");
    if (ff != 1 || fwt != kLength) {
      if (!fr.Skip(fwt)) return Malformed("bad field in Features");
      continue;
    }
    absl::string_view entry;
    if (!fr.ReadLengthDelimited(&entry)) return Malformed("truncated map entry");
    absl::string_view key;
    FeatureView feature;
    WireReader er(entry);
    while (!er.done()) {
      uint32_t ef, ewt;
      if (!er.ReadTag(&ef, &ewt)) return Malformed("bad tag in map entry");
      if (ef == 1 && ewt == kLength) {
        if (!er.ReadLengthDelimited(&key)) return Malformed("bad key");
      } else if (ef == 2 && ewt == kLength) {
        absl::string_view value;
        if (!er.ReadLengthDelimited(&value)) return Malformed("bad Feature");
        // A repeated value field in one entry merges, as protobuf does.
        absl::Status s = ParseFeature(value, &feature);
        if (!s.ok()) return s;
      } else if (!er.Skip(ewt)) {
        return Malformed("bad field in map entry");
      }
    }
    absl::Status s = visit(key, feature);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WalkExampleOrSequence(absl::string_view record, const FeatureVisitor& visit,
                                   std::vector<absl::string_view>* feature_list_keys) {
  WireReader r(record);
  while (!r.done()) {
    uint32_t field, wt;
    if (!r.ReadTag(&field, &wt)) return Malformed("bad tag in Example");
    if (wt == kLength && (field == 1 || field == 2)) {
      absl::string_view body;
      if (!r.ReadLengthDelimited(&body)) return Malformed("truncated Features");
      if (field == 1) {
        absl::Status s = WalkFeatures(body, visit);
        if (!s.ok()) return s;
      } else {
        FeatureListKeys(body, feature_list_keys);
      }
    } else if (!r.Skip(wt)) {
      return Malformed("bad field in Example");
    }
  }
  return absl::OkStatus();
}

absl::Status WalkExample(absl::string_view example, const FeatureVisitor& visit) {
  std::vector<absl::string_view> lists;
  absl::Status s = WalkExampleOrSequence(example, visit, &lists);
  if (!s.ok() || lists.empty()) return s;
  std::string keys;
  for (size_t i = 0; i < lists.size() && i < 3; ++i) {
    absl::StrAppend(&keys, i ? ", '" : "'", lists[i], "'");
  }
  if (lists.size() > 3) absl::StrAppend(&keys, ", ...");
  return absl::FailedPreconditionError(absl::StrCat(
      "a SequenceExample with feature_lists (", keys,
      "): only Example features and SequenceExample context features can be read"));
}

absl::Status DecodeInt64s(const FeatureView& f, std::vector<int64_t>* out) {
  for (absl::string_view list : f.lists) {
    WireReader r(list);
    while (!r.done()) {
      uint32_t field, wt;
      if (!r.ReadTag(&field, &wt)) return Malformed("bad tag in Int64List");
      uint64_t v;
      if (field == 1 && wt == kVarint) {
        if (!r.ReadVarint(&v)) return Malformed("bad varint in Int64List");
        out->push_back(static_cast<int64_t>(v));
      } else if (field == 1 && wt == kLength) {
        absl::string_view packed;
        if (!r.ReadLengthDelimited(&packed)) return Malformed("bad packed Int64List");
        WireReader pr(packed);
        while (!pr.done()) {
          if (!pr.ReadVarint(&v)) return Malformed("bad packed varint");
          out->push_back(static_cast<int64_t>(v));
        }
      } else if (!r.Skip(wt)) {
        return Malformed("bad field in Int64List");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DecodeFloats(const FeatureView& f, std::vector<float>* out) {
  for (absl::string_view list : f.lists) {
    WireReader r(list);
    while (!r.done()) {
      uint32_t field, wt;
      if (!r.ReadTag(&field, &wt)) return Malformed("bad tag in FloatList");
      uint32_t bits = 0;
      if (field == 1 && wt == kFixed32) {
        if (!r.ReadFixed32(&bits)) return Malformed("bad float in FloatList");
        float v;
        std::memcpy(&v, &bits, 4);
        out->push_back(v);
      } else if (field == 1 && wt == kLength) {
        absl::string_view packed;
        if (!r.ReadLengthDelimited(&packed) || packed.size() % 4 != 0) {
          return Malformed("bad packed FloatList");
        }
        WireReader pr(packed);
        while (!pr.done()) {
          pr.ReadFixed32(&bits);
          float v;
          std::memcpy(&v, &bits, 4);
          out->push_back(v);
        }
      } else if (!r.Skip(wt)) {
        return Malformed("bad field in FloatList");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DecodeBytes(const FeatureView& f, std::vector<absl::string_view>* out) {
  for (absl::string_view list : f.lists) {
    WireReader r(list);
    while (!r.done()) {
      uint32_t field, wt;
      if (!r.ReadTag(&field, &wt)) return Malformed("bad tag in BytesList");
      if (field == 1 && wt == kLength) {
        absl::string_view v;
        if (!r.ReadLengthDelimited(&v)) return Malformed("bad value in BytesList");
        out->push_back(v);
      } else if (!r.Skip(wt)) {
        return Malformed("bad field in BytesList");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CountValues(const FeatureView& f, int64_t* count, int64_t* bytes_total) {
  *count = 0;
  *bytes_total = 0;
  switch (f.kind) {
    case FeatureKind::kNone:
      return absl::OkStatus();
    case FeatureKind::kBytes: {
      std::vector<absl::string_view> v;
      absl::Status s = DecodeBytes(f, &v);
      for (auto x : v) *bytes_total += static_cast<int64_t>(x.size());
      *count = static_cast<int64_t>(v.size());
      return s;
    }
    case FeatureKind::kFloat: {
      std::vector<float> v;
      absl::Status s = DecodeFloats(f, &v);
      *count = static_cast<int64_t>(v.size());
      return s;
    }
    case FeatureKind::kInt64: {
      std::vector<int64_t> v;
      absl::Status s = DecodeInt64s(f, &v);
      *count = static_cast<int64_t>(v.size());
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace shardfeed
