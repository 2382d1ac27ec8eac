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
  }
  return 1;
}

int64_t FeatureSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<FeatureSpec> SpecFromManifest(const Manifest& manifest) {
  std::vector<FeatureSpec> spec;
  for (const FeatureSchema& f : manifest.features()) {
    FeatureSpec s;
    s.name = f.name();
    if (f.kind() == "bytes") {
      if (f.dtype() == "uint8" && f.shape_size() > 0) {
        s.dtype = DType::kUint8;
        s.shape.assign(f.shape().begin(), f.shape().end());
      } else {
        s.dtype = DType::kUint8;
        s.variable_length = true;
      }
    } else {
      s.dtype = f.kind() == "float" ? DType::kFloat32 : DType::kInt64;
      if (f.length() > 1) s.shape = {f.length()};
      if (f.length() == 0) continue;  // variable-length numbers: not supported as tensors
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
    if (size_t bracket = type.find('['); bracket != std::string::npos) {
      if (type.back() != ']') return absl::InvalidArgumentError(absl::StrCat("'", s, "': bad shape"));
      for (absl::string_view d : absl::StrSplit(type.substr(bracket + 1, type.size() - bracket - 2),
                                                absl::ByAnyChar("x, "), absl::SkipEmpty())) {
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
      if (f.shape.empty()) return absl::InvalidArgumentError(absl::StrCat("'", s, "': uint8 needs a shape"));
    } else if (type == "int64") {
      f.dtype = DType::kInt64;
    } else if (type == "float32" || type == "float") {
      f.dtype = DType::kFloat32;
    } else if (type == "bytes") {
      f.dtype = DType::kUint8;
      f.variable_length = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("'", s, "': type must be uint8, int64, float32 or bytes"));
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
      if (f->dtype == DType::kUint8) {
        return absl::InvalidArgumentError(
            absl::StrCat("decode '", f->name, "=", d.text, "': a bytes feature, not numbers"));
      }
      f->dtype = d.kind == DecodeKind::kInt64List ? DType::kInt64 : DType::kFloat32;
      f->shape = {d.list_length};
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("decode '", f->name, "': bad spec"));
  }
  f->variable_length = false;
  f->decode = d;
  if (d.optional) {
    f->has_default = true;
    f->default_value = d.pad;
  }
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
      // Variable-length number lists are not in the manifest's spec.
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
    std::string p = absl::StrCat(f.name, ":", f.variable_length ? "bytes" : DTypeName(f.dtype));
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
