#include "reader/feature_spec.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace shardfeed {

const char* DTypeName(DType d) {
  switch (d) {
    case DType::kUint8:
      return "uint8";
    case DType::kInt64:
      return "int64";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat64:
      return "float64";
  }
  return "?";
}

size_t DTypeSize(DType d) {
  switch (d) {
    case DType::kUint8:
      return 1;
    case DType::kInt64:
      return 8;
    case DType::kFloat32:
      return 4;
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kFloat64:
      return 8;
  }
  return 1;
}

int64_t FeatureSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool IsRawBytes(const FeatureSpec& f) {
  return f.dtype == DType::kUint8 || f.dtype == DType::kFloat64;
}

std::vector<FeatureSpec> SpecFromManifest(const Manifest& manifest,
                                          std::vector<std::string>* notes) {
  auto note = [&](std::string line) {
    if (notes != nullptr) notes->push_back(std::move(line));
  };
  std::vector<FeatureSpec> spec;
  for (const FeatureSchema& f : manifest.features()) {
    FeatureSpec s;
    s.name = f.name();
    if (f.kind() == "bytes") {
      const bool raw = (f.dtype() == "uint8" && f.shape_size() > 0) || f.dtype() == "float64";
      s.dtype = f.dtype() == "float64" ? DType::kFloat64 : DType::kUint8;
      if (raw) {
        s.shape.assign(f.shape().begin(), f.shape().end());
        if (std::any_of(s.shape.begin(), s.shape.end(), [](int64_t d) { return d < 0; })) {
          s.shape.clear();  // a -1 dimension: the shape varies between records
          s.variable_length = true;
        }
      } else {
        s.variable_length = true;
        if (!f.dtype().empty() && f.dtype() != "uint8") {
          note(absl::StrCat("feature '", f.name(), "': dtype '", f.dtype(),
                            "' is not one the reader knows: delivered as its raw bytes"));
        }
      }
    } else if (f.kind() == "int64" || f.kind() == "float") {
      s.dtype = f.kind() == "float" ? DType::kFloat32 : DType::kInt64;
      if (f.length() > 1) s.shape = {f.length()};
      if (f.length() == 0) s.variable_length = true;  // values + offsets
    } else {
      note(absl::StrCat("feature '", f.name(), "' left out: ",
                        f.kind().empty() ? "no record holds a value (its kind is unknown)"
                                         : absl::StrCat("unknown kind '", f.kind(), "'")));
      continue;
    }
    if (f.optional()) {
      if (!s.variable_length) {
        note(absl::StrCat("feature '", f.name(), "' is missing from some records: delivered "
                          "variable-length (", f.name(), " + ", f.name(),
                          "/offsets), an empty row where a record lacks it; give features= "
                          "with a default (e.g. '", f.name(), ":", DTypeName(s.dtype),
                          "=0') for a fixed shape"));
      }
      s.variable_length = true;
      s.shape.clear();
      s.has_default = true;  // missing: an empty row
    }
    spec.push_back(s);
  }
  return spec;
}

absl::StatusOr<std::vector<FeatureSpec>> ParseSpec(const std::string& text) {
  // Split on ',' or ';' outside brackets ("image:uint8[3,32,32],label:int64").
  std::vector<std::string> items(1);
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if ((c == ',' || c == ';') && depth == 0) {
      items.emplace_back();
    } else {
      items.back() += c;
    }
  }
  std::vector<FeatureSpec> spec;
  for (const std::string& item : items) {
    std::string s(absl::StripAsciiWhitespace(item));
    if (s.empty()) continue;
    FeatureSpec f;
    if (size_t eq = s.find('='); eq != std::string::npos) {
      if (!absl::SimpleAtod(s.substr(eq + 1), &f.default_value)) {
        return absl::InvalidArgumentError(absl::StrCat("bad default in '", s, "'"));
      }
      f.has_default = true;
      s = s.substr(0, eq);
    }
    size_t colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return absl::InvalidArgumentError(absl::StrCat("'", s, "': expected NAME:TYPE[SHAPE]"));
    }
    f.name = s.substr(0, colon);
    std::string type = s.substr(colon + 1);
    bool empty_brackets = false;  // "int64[]": variable length
    if (size_t bracket = type.find('['); bracket != std::string::npos) {
      if (type.back() != ']') return absl::InvalidArgumentError(absl::StrCat("'", s, "': bad shape"));
      const std::string dims = type.substr(bracket + 1, type.size() - bracket - 2);
      empty_brackets = absl::StripAsciiWhitespace(dims).empty();
      for (absl::string_view d : absl::StrSplit(dims, absl::ByAnyChar("x, "), absl::SkipEmpty())) {
        int64_t v;
        if (!absl::SimpleAtoi(d, &v) || v <= 0) {
          return absl::InvalidArgumentError(absl::StrCat("'", s, "': bad dimension '", d, "'"));
        }
        f.shape.push_back(v);
      }
      type = type.substr(0, bracket);
    }
    if (type == "uint8") {
      f.dtype = DType::kUint8;
      if (f.shape.empty() && !empty_brackets) {
        return absl::InvalidArgumentError(absl::StrCat("'", s, "': uint8 needs a shape"));
      }
    } else if (type == "int64") {
      f.dtype = DType::kInt64;
    } else if (type == "float32" || type == "float") {
      f.dtype = DType::kFloat32;
    } else if (type == "float64") {
      f.dtype = DType::kFloat64;
    } else if (type == "bytes") {
      f.dtype = DType::kUint8;
      f.variable_length = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", s, "': type must be uint8, int64, float32, float64 or bytes (TYPE[] for a "
          "variable-length list)"));
    }
    if (empty_brackets) f.variable_length = true;
    if (f.variable_length && f.has_default && f.default_value != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", item, "': a variable-length feature's default is an empty row ('=0' or none)"));
    }
    spec.push_back(f);
  }
  if (spec.empty()) return absl::InvalidArgumentError("empty feature spec");
  return spec;
}

namespace {

absl::Status Shape(FeatureSpec* f, const DecodeSpec& d) {
  switch (d.kind) {
    case DecodeKind::kImage:
    case DecodeKind::kAudio:
      if (f->dtype != DType::kUint8 || !f->variable_length) {
        return absl::InvalidArgumentError(absl::StrCat("decode '", f->name, "=", d.text,
                                                       "': not a variable-length bytes feature"));
      }
      if (d.kind == DecodeKind::kImage) {
        f->dtype = DType::kUint8;
        f->shape = {d.image.out_h, d.image.out_w, 3};
      } else {
        f->dtype = DType::kFloat32;
        f->shape = {d.audio.channels, d.audio.length};
      }
      break;
    case DecodeKind::kInt64List:
    case DecodeKind::kFloatList:
      if (IsRawBytes(*f)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "decode '", f->name, "=", d.text, "': a ",
            f->dtype == DType::kUint8 ? "bytes" : "float64 (raw bytes)",
            " feature, not an int64/float list"));
      }
      f->dtype = d.kind == DecodeKind::kInt64List ? DType::kInt64 : DType::kFloat32;
      f->shape = {d.list_length};
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("decode '", f->name, "': bad spec"));
  }
  f->variable_length = false;
  f->decode = d;
  // Missing values: what the decode spec says ("optional"), whatever the
  // manifest's spec said for the undecoded feature.
  f->has_default = d.optional;
  f->default_value = d.optional ? d.pad : 0;
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyDecodeSpecs(const std::map<std::string, std::string>& decode,
                              std::vector<FeatureSpec>* features) {
  for (const auto& [name, text] : decode) {
    absl::StatusOr<DecodeSpec> d = ParseDecodeSpec(text);
    if (!d.ok()) return d.status();
    auto it = std::find_if(features->begin(), features->end(),
                           [&](const FeatureSpec& f) { return f.name == name; });
    if (it != features->end() && it->decode.kind != DecodeKind::kNone) {
      if (it->decode.text == text) continue;  // applied already
      return absl::InvalidArgumentError(
          absl::StrCat("decode '", name, "': already decoded as '", it->decode.text, "'"));
    }
    const bool list = d->kind == DecodeKind::kInt64List || d->kind == DecodeKind::kFloatList;
    if (it == features->end()) {
      // A user's spec without the list: the decode spec adds it.
      if (!list) return absl::InvalidArgumentError(absl::StrCat("decode: no feature '", name, "'"));
      FeatureSpec f;
      f.name = name;
      f.dtype = DType::kInt64;
      features->push_back(f);
      it = features->end() - 1;
    }
    absl::Status s = Shape(&*it, *d);
    if (!s.ok()) return s;
    if (d->kind != DecodeKind::kImage) {
      FeatureSpec length;
      length.name = name + "/length";
      length.dtype = DType::kInt64;
      length.decode.kind = DecodeKind::kLengthOf;
      length.length_of = name;
      features->insert(it + 1, length);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, std::string>> ParseDecodeOption(const std::string& text) {
  std::map<std::string, std::string> out;
  for (absl::string_view item : absl::StrSplit(text, ';', absl::SkipWhitespace())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos || eq == 0 ||
        item.substr(0, eq).find(',') != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--decode '", item, "': expected FEATURE=SPEC (e.g. image/encoded=image,",
                       "random_resized_crop=224,flip)"));
    }
    out[std::string(absl::StripAsciiWhitespace(item.substr(0, eq)))] =
        std::string(absl::StripAsciiWhitespace(item.substr(eq + 1)));
  }
  return out;
}

std::string SpecToString(const std::vector<FeatureSpec>& spec) {
  std::vector<std::string> parts;
  for (const FeatureSpec& f : spec) {
    const bool bytes = f.variable_length && f.dtype == DType::kUint8;
    std::string p = absl::StrCat(f.name, ":", bytes ? "bytes" : DTypeName(f.dtype));
    if (f.variable_length && !bytes) absl::StrAppend(&p, "[]");
    if (!f.shape.empty()) absl::StrAppend(&p, "[", absl::StrJoin(f.shape, "x"), "]");
    if (f.has_default) absl::StrAppend(&p, "=", f.default_value);
    if (f.decode.kind != DecodeKind::kNone && f.decode.kind != DecodeKind::kLengthOf) {
      absl::StrAppend(&p, " (decoded: ", f.decode.text, ")");
    }
    parts.push_back(p);
  }
  return absl::StrJoin(parts, ";");
}

}  // namespace shardfeed
