#include "reader/example_layout.h"

#include <cstring>
#include <limits>

#include "reader/example_wire.h"

namespace shardfeed {
namespace {

// Wire types and the Feature list kinds (example_wire.h).
constexpr uint32_t kVarint = 0, kLength = 2, kFixed32 = 5;

constexpr bool kLittleEndian =
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
#else
    false;
#endif

bool ReadTagIs(WireReader* r, uint32_t field, uint32_t wire_type) {
  uint32_t f, wt;
  return r->ReadTag(&f, &wt) && f == field && wt == wire_type;
}

}  // namespace

// Walks one record under the strict grammar of the header comment and
// records its holes; any deviation refuses the layout.
class LayoutBuilder {
 public:
  LayoutBuilder(absl::string_view record, const std::vector<FeatureSpec>& spec)
      : base_(record.data()), spec_(spec), seen_(spec.size(), false) {}

  bool Build(absl::string_view record, ExampleLayout* layout) {
    WireReader r(record);
    absl::string_view features;
    if (!ReadTagIs(&r, 1, kLength) || !r.ReadLengthDelimited(&features) || !r.done()) {
      return false;
    }
    WireReader fr(features);
    while (!fr.done()) {
      absl::string_view entry, key, feature;
      if (!ReadTagIs(&fr, 1, kLength) || !fr.ReadLengthDelimited(&entry)) return false;
      WireReader er(entry);
      if (!ReadTagIs(&er, 1, kLength) || !er.ReadLengthDelimited(&key)) return false;
      if (!ReadTagIs(&er, 2, kLength) || !er.ReadLengthDelimited(&feature) || !er.done()) {
        return false;
      }
      if (!AddFeature(key, feature)) return false;
    }
    for (bool s : seen_) {
      if (!s) return false;  // a default taken, or a spec name given twice
    }
    layout->skeleton_ = std::string(record);
    layout->holes_ = std::move(holes_);
    uint32_t at = 0;
    for (const ExampleLayout::Hole& h : layout->holes_) {
      if (h.at > at) layout->literals_.push_back({at, h.at - at});
      at = h.at + h.width;
    }
    const uint32_t size = static_cast<uint32_t>(record.size());
    if (size > at) layout->literals_.push_back({at, size - at});
    return true;
  }

 private:
  uint32_t Offset(const char* p) const { return static_cast<uint32_t>(p - base_); }

  // One map entry: a spec's feature becomes holes; another key stays part
  // of the skeleton (the general decoder skips it).
  bool AddFeature(absl::string_view key, absl::string_view feature) {
    size_t i = 0;
    while (i < spec_.size() && spec_[i].name != key) ++i;
    if (i == spec_.size()) return true;
    if (seen_[i]) return false;  // a duplicate key: the last would win
    seen_[i] = true;
    WireReader fr(feature);
    uint32_t kind, wt;
    absl::string_view list;
    if (!fr.ReadTag(&kind, &wt) || wt != kLength || !fr.ReadLengthDelimited(&list) || !fr.done()) {
      return false;
    }
    const FeatureSpec& f = spec_[i];
    if (kind != static_cast<uint32_t>(WireKind(f))) return false;
    switch (WireKind(f)) {
      case FeatureKind::kBytes:
        return AddBytes(i, list);
      case FeatureKind::kFloat:
        return AddNumbers(i, list, kFixed32, sizeof(float));
      case FeatureKind::kInt64:
        return AddNumbers(i, list, kVarint, sizeof(int64_t));
      case FeatureKind::kNone:
        break;
    }
    return false;
  }

  bool AddBytes(size_t i, absl::string_view list) {
    WireReader lr(list);
    absl::string_view value;
    if (!ReadTagIs(&lr, 1, kLength) || !lr.ReadLengthDelimited(&value) || !lr.done() ||
        value.size() != spec_[i].row_bytes()) {
      return false;
    }
    AddHole(value.data(), value.size(), i, 0, false);
    return true;
  }

  // A FloatList / Int64List of exactly elements() values, packed, unpacked
  // or both: each varint is a hole, each run of floats one hole.
  bool AddNumbers(size_t i, absl::string_view list, uint32_t scalar_wire, size_t value_size) {
    const uint64_t want = static_cast<uint64_t>(spec_[i].elements());
    const bool varint = scalar_wire == kVarint;
    uint64_t n = 0;
    WireReader lr(list);
    while (!lr.done()) {
      uint32_t field, wt;
      if (!lr.ReadTag(&field, &wt) || field != 1) return false;
      if (wt == scalar_wire) {
        const char* start = lr.position();
        if (!(varint ? ReadVarint(&lr) : lr.Skip(kFixed32))) return false;
        AddHole(start, lr.position() - start, i, n * value_size, varint);
        ++n;
      } else if (wt == kLength) {
        absl::string_view packed;
        if (!lr.ReadLengthDelimited(&packed)) return false;
        if (!varint) {
          if (packed.size() % sizeof(float) != 0) return false;
          if (!packed.empty()) AddHole(packed.data(), packed.size(), i, n * value_size, false);
          n += packed.size() / sizeof(float);
          continue;
        }
        WireReader pr(packed);
        while (!pr.done()) {
          const char* start = pr.position();
          if (!ReadVarint(&pr)) return false;
          AddHole(start, pr.position() - start, i, n * value_size, true);
          ++n;
        }
      } else {
        return false;
      }
      if (n > want) return false;
    }
    return n == want && (varint || kLittleEndian);
  }

  static bool ReadVarint(WireReader* r) {
    uint64_t ignored;
    return r->ReadVarint(&ignored);
  }

  void AddHole(const char* at, size_t width, size_t feature, uint64_t dest, bool varint) {
    holes_.push_back({Offset(at), static_cast<uint32_t>(width), static_cast<uint32_t>(feature),
                      static_cast<uint32_t>(dest), varint});
  }

  const char* base_;
  const std::vector<FeatureSpec>& spec_;
  std::vector<bool> seen_;
  std::vector<ExampleLayout::Hole> holes_;
};

bool ExampleLayout::SpecSupported(const std::vector<FeatureSpec>& spec) {
  if (spec.empty()) return false;
  for (const FeatureSpec& f : spec) {
    if (f.decode.kind != DecodeKind::kNone || f.variable_length) return false;
    if (f.row_bytes() > std::numeric_limits<uint32_t>::max()) return false;
    switch (f.dtype) {
      case DType::kUint8:
      case DType::kFloat64:
      case DType::kInt64:
      case DType::kFloat32:
        break;
      case DType::kFloat16:
      case DType::kBFloat16:
        return false;
    }
  }
  return true;
}

std::optional<ExampleLayout> ExampleLayout::Learn(absl::string_view record,
                                                  const std::vector<FeatureSpec>& spec) {
  if (!SpecSupported(spec) || record.size() > std::numeric_limits<uint32_t>::max()) {
    return std::nullopt;
  }
  ExampleLayout layout;
  if (!LayoutBuilder(record, spec).Build(record, &layout)) return std::nullopt;
  return layout;
}

bool ExampleLayout::DecodeInto(absl::string_view record, char* const* fixed_rows) const {
  if (record.size() != skeleton_.size()) return false;
  const char* r = record.data();
  const char* s = skeleton_.data();
  for (const Literal& l : literals_) {
    if (std::memcmp(r + l.at, s + l.at, l.size) != 0) return false;
  }
  for (const Hole& h : holes_) {
    if (fixed_rows[h.feature] == nullptr) return false;
    if (!h.varint) continue;
    // The same width: every byte but the last continues the varint.
    for (uint32_t k = 0; k + 1 < h.width; ++k) {
      if (static_cast<uint8_t>(r[h.at + k]) < 0x80) return false;
    }
    if (static_cast<uint8_t>(r[h.at + h.width - 1]) >= 0x80) return false;
  }
  for (const Hole& h : holes_) {
    char* row = fixed_rows[h.feature] + h.dest;
    if (!h.varint) {
      std::memcpy(row, r + h.at, h.width);
      continue;
    }
    uint64_t v = 0;  // as WireReader::ReadVarint: bits past 64 dropped
    for (uint32_t k = 0; k < h.width; ++k) {
      v |= uint64_t{static_cast<uint8_t>(r[h.at + k]) & 0x7fu} << (7 * k);
    }
    const int64_t value = static_cast<int64_t>(v);
    std::memcpy(row, &value, sizeof(value));
  }
  return true;
}

absl::Status LayoutDecoder::Decode(absl::string_view record, char* const* fixed_rows,
                                   std::string* const* var_values, const DecodeContext& context) {
  if (layout_.has_value() && layout_->DecodeInto(record, fixed_rows)) {
    ++fast_;
    misses_in_a_row_ = 0;
    return absl::OkStatus();
  }
  ++general_;
  absl::Status s = DecodeExampleRow(record, *spec_, fixed_rows, var_values, context);
  const bool relearn = !layout_.has_value() || ++misses_in_a_row_ >= kMissesBeforeRelearn;
  if (s.ok() && supported_ && relearn && failed_learns_ < kMaxFailedLearns) {
    misses_in_a_row_ = 0;
    std::optional<ExampleLayout> learned = ExampleLayout::Learn(record, *spec_);
    if (learned.has_value()) {
      layout_ = std::move(learned);
    } else {
      ++failed_learns_;
    }
  }
  return s;
}

}  // namespace shardfeed
