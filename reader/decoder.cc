#include "reader/decoder.h"

#include <algorithm>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "reader/decode/image_decoder.h"
#include "reader/decode/wav_decoder.h"
#include "reader/example_wire.h"

namespace shardfeed {
namespace {

absl::Status Wrong(const FeatureSpec& f, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("feature '", f.name, "': ", what));
}

// Fills an element count of numbers from every occurrence of the list.
// Padded lists (decode kInt64List/kFloatList) keep the first elements()
// values, pad the rest, and report how many they kept in *kept.
template <typename T, typename ReadOne, typename ReadPacked>
absl::Status DecodeNumbers(const FeatureView& v, const FeatureSpec& f, uint32_t scalar_wire,
                           T* out, ReadOne read_one, ReadPacked read_packed, int64_t* kept) {
  const int64_t want = f.elements();
  int64_t n = 0;
  for (absl::string_view list : v.lists) {
    WireReader r(list);
    while (!r.done()) {
      uint32_t field, wt;
      if (!r.ReadTag(&field, &wt)) return Wrong(f, "malformed list");
      if (field == 1 && wt == scalar_wire) {
        T x;
        if (!read_one(&r, &x)) return Wrong(f, "malformed value");
        if (n < want) out[n] = x;
        ++n;
      } else if (field == 1 && wt == 2) {
        absl::string_view packed;
        if (!r.ReadLengthDelimited(&packed)) return Wrong(f, "malformed packed list");
        WireReader pr(packed);
        while (!pr.done()) {
          T x;
          if (!read_packed(&pr, &x)) return Wrong(f, "malformed packed value");
          if (n < want) out[n] = x;
          ++n;
        }
      } else if (!r.Skip(wt)) {
        return Wrong(f, "malformed list");
      }
    }
  }
  const bool padded = f.decode.kind == DecodeKind::kInt64List ||
                      f.decode.kind == DecodeKind::kFloatList;
  if (padded) {
    *kept = std::min(n, want);
    std::fill(out + *kept, out + want, static_cast<T>(f.decode.pad));
    return absl::OkStatus();
  }
  if (n != want) return Wrong(f, absl::StrCat("has ", n, " values, expected ", want));
  return absl::OkStatus();
}

absl::Status DecodeSingleBytes(const FeatureView& v, const FeatureSpec& f,
                               absl::string_view* value) {
  int n = 0;
  for (absl::string_view list : v.lists) {
    WireReader r(list);
    while (!r.done()) {
      uint32_t field, wt;
      if (!r.ReadTag(&field, &wt)) return Wrong(f, "malformed list");
      if (field == 1 && wt == 2) {
        if (!r.ReadLengthDelimited(value)) return Wrong(f, "malformed value");
        ++n;
      } else if (!r.Skip(wt)) {
        return Wrong(f, "malformed list");
      }
    }
  }
  if (n != 1) return Wrong(f, absl::StrCat("has ", n, " bytes values, expected 1"));
  return absl::OkStatus();
}

void FillDefault(const FeatureSpec& f, char* row) {
  const int64_t n = f.elements();
  switch (f.dtype) {
    case DType::kUint8:
      std::memset(row, static_cast<int>(f.default_value), n);
      break;
    case DType::kInt64:
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<int64_t*>(row)[i] = static_cast<int64_t>(f.default_value);
      break;
    case DType::kFloat32:
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(row)[i] = static_cast<float>(f.default_value);
      break;
    case DType::kFloat64:
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<double*>(row)[i] = f.default_value;
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      break;  // never in a spec: transform outputs only
  }
}

// A variable-length int64/float32 list: every value, appended to *var as
// the dtype's bytes (the slot turns byte counts into element offsets).
absl::Status AppendNumbers(const FeatureView& v, const FeatureSpec& f, std::string* var) {
  if (f.dtype == DType::kInt64) {
    std::vector<int64_t> values;
    if (absl::Status s = DecodeInt64s(v, &values); !s.ok()) return Wrong(f, s.message());
    var->append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
  } else {
    std::vector<float> values;
    if (absl::Status s = DecodeFloats(v, &values); !s.ok()) return Wrong(f, s.message());
    var->append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  return absl::OkStatus();
}

// A decoder's error keeps its code (INVALID_ARGUMENT / DATA_LOSS) and gains
// the feature's name.
absl::Status Named(const FeatureSpec& f, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("feature '", f.name, "': ", s.message()));
}

absl::Status DecodeBytesFeature(const FeatureView& v, const FeatureSpec& f, char* row,
                                std::string* var, const DecodeContext& context, int64_t* length) {
  absl::string_view value;
  absl::Status s = DecodeSingleBytes(v, f, &value);
  if (!s.ok()) return s;
  switch (f.decode.kind) {
    case DecodeKind::kImage:
      s = CpuImageDecoder().DecodeInto(value, f.decode.image, context.seed, context.sample,
                                       reinterpret_cast<uint8_t*>(row));
      return s.ok() ? s : Named(f, s);
    case DecodeKind::kAudio: {
      absl::StatusOr<int64_t> n = DecodeWavInto(value, f.decode.audio, context.seed,
                                                context.sample, reinterpret_cast<float*>(row));
      if (!n.ok()) return Named(f, n.status());
      *length = *n;
      return absl::OkStatus();
    }
    default:
      break;
  }
  if (f.variable_length) {
    if (value.size() % DTypeSize(f.dtype) != 0) {
      return Wrong(f, absl::StrCat("is ", value.size(), " bytes, not a whole number of ",
                                   DTypeName(f.dtype), " values (", DTypeSize(f.dtype),
                                   " bytes each)"));
    }
    var->append(value.data(), value.size());
  } else if (value.size() != f.row_bytes()) {
    return Wrong(f, absl::StrCat("is ", value.size(), " bytes, expected ", f.row_bytes(),
                                 f.dtype == DType::kUint8
                                     ? ""
                                     : absl::StrCat(" (", f.elements(), " ", DTypeName(f.dtype),
                                                    " values)")));
  } else {
    std::memcpy(row, value.data(), value.size());
  }
  return absl::OkStatus();
}

absl::Status DecodeFeature(const FeatureView& v, const FeatureSpec& f, char* row,
                           std::string* var, const DecodeContext& context, int64_t* length) {
  if (WireKind(f) == FeatureKind::kBytes) {
    return DecodeBytesFeature(v, f, row, var, context, length);
  }
  if (f.variable_length) return AppendNumbers(v, f, var);
  if (f.dtype == DType::kInt64) {
    auto varint = [](WireReader* r, int64_t* x) {
      uint64_t u;
      if (!r->ReadVarint(&u)) return false;
      *x = static_cast<int64_t>(u);
      return true;
    };
    return DecodeNumbers<int64_t>(v, f, 0, reinterpret_cast<int64_t*>(row), varint, varint,
                                  length);
  }
  auto fixed32 = [](WireReader* r, float* x) {
    uint32_t bits;
    if (!r->ReadFixed32(&bits)) return false;
    std::memcpy(x, &bits, 4);
    return true;
  };
  return DecodeNumbers<float>(v, f, 5, reinterpret_cast<float*>(row), fixed32, fixed32, length);
}

// The source file a record came from, as the converters store it
// ("image/filename" for image-folder, "filename" for files): " (from
// image/filename 'ants/x.gif')", or "" when the record has neither. Walked
// again only for a record that failed, so the common path pays nothing.
std::string SourceNameOf(absl::string_view record) {
  std::string hint;
  WalkExample(record, [&](absl::string_view key, const FeatureView& v) {
    if ((key == "image/filename" || key == "filename") && v.kind == FeatureKind::kBytes) {
      std::vector<absl::string_view> values;
      if (DecodeBytes(v, &values).ok() && values.size() == 1 && values[0].size() <= 512) {
        hint = absl::StrCat(" (from ", key, " '", absl::CHexEscape(values[0]), "')");
      }
    }
    return absl::OkStatus();
  }).IgnoreError();
  return hint;
}

absl::Status DecodeRowOrError(absl::string_view record, const std::vector<FeatureSpec>& spec,
                              char* const* fixed_rows, std::string* const* var_values,
                              const DecodeContext& context) {
  absl::InlinedVector<FeatureView, 8> found(spec.size());
  absl::InlinedVector<bool, 8> seen(spec.size(), false);
  absl::Status walk = WalkExample(record, [&](absl::string_view key, const FeatureView& v) {
    for (size_t i = 0; i < spec.size(); ++i) {
      if (spec[i].name == key && spec[i].decode.kind != DecodeKind::kLengthOf) {
        found[i] = v;  // a later duplicate key replaces an earlier one
        seen[i] = true;
        break;
      }
    }
    return absl::OkStatus();
  });
  if (!walk.ok()) return walk;
  // lengths[i]: values before padding, for NAME/length features.
  absl::InlinedVector<int64_t, 8> lengths(spec.size(), 0);
  for (size_t i = 0; i < spec.size(); ++i) {
    const FeatureSpec& f = spec[i];
    if (f.decode.kind == DecodeKind::kLengthOf) continue;
    const FeatureView& v = found[i];
    if (seen[i] && v.kind == FeatureKind::kNone && f.variable_length) continue;  // no values
    if (!seen[i] || v.kind == FeatureKind::kNone) {
      if (!f.has_default) return Wrong(f, "missing from the record");
      if (f.variable_length) continue;  // an empty value
      FillDefault(f, fixed_rows[i]);
      continue;
    }
    const FeatureKind want = WireKind(f);
    if (v.kind != want) {
      return Wrong(f, absl::StrCat("is ", FeatureKindName(v.kind), ", expected ",
                                   FeatureKindName(want)));
    }
    absl::Status s = DecodeFeature(v, f, fixed_rows[i], var_values[i], context, &lengths[i]);
    if (!s.ok()) return s;
  }
  for (size_t j = 0; j < spec.size(); ++j) {
    if (spec[j].decode.kind != DecodeKind::kLengthOf || fixed_rows[j] == nullptr) continue;
    int64_t n = 0;
    for (size_t i = 0; i < spec.size(); ++i) {
      if (spec[i].name == spec[j].length_of && i != j) n = lengths[i];
    }
    std::memcpy(fixed_rows[j], &n, sizeof(n));
  }
  return absl::OkStatus();
}

}  // namespace

FeatureKind WireKind(const FeatureSpec& f) {
  if (f.decode.kind == DecodeKind::kImage || f.decode.kind == DecodeKind::kAudio) {
    return FeatureKind::kBytes;
  }
  return IsRawBytes(f)              ? FeatureKind::kBytes
         : f.dtype == DType::kInt64 ? FeatureKind::kInt64
                                    : FeatureKind::kFloat;
}

absl::Status DecodeExampleRow(absl::string_view record, const std::vector<FeatureSpec>& spec,
                              char* const* fixed_rows, std::string* const* var_values,
                              const DecodeContext& context) {
  absl::Status s = DecodeRowOrError(record, spec, fixed_rows, var_values, context);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(s.message(), SourceNameOf(record)));
}

}  // namespace shardfeed
