#include "reader/feature_transforms.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace shardfeed {

DType DTypeOf(gpu::OutputType t) {
  switch (t) {
    case gpu::OutputType::kFloat32:
      return DType::kFloat32;
    case gpu::OutputType::kFloat16:
      return DType::kFloat16;
    case gpu::OutputType::kBFloat16:
      return DType::kBFloat16;
  }
  return DType::kFloat32;
}

absl::Status ResolveTransforms(const std::vector<FeatureSpec>& features,
                               std::vector<FeatureTransform>* transforms,
                               std::vector<int>* transform_of) {
  transform_of->assign(features.size(), -1);
  for (size_t i = 0; i < transforms->size(); ++i) {
    FeatureTransform& ft = (*transforms)[i];
    gpu::ImageTransform& t = ft.transform;
    size_t f = 0;
    while (f < features.size() && features[f].name != ft.feature) ++f;
    if (f == features.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("transform of '", ft.feature, "': no such feature in the spec"));
    }
    const FeatureSpec& spec = features[f];
    if (spec.variable_length || spec.dtype != DType::kUint8) {
      return absl::InvalidArgumentError(absl::StrCat(
          "transform of '", ft.feature, "': needs a fixed-shape uint8 feature, not ",
          spec.variable_length
              ? absl::StrCat("variable-length ",
                             spec.dtype == DType::kUint8 ? "bytes" : DTypeName(spec.dtype))
              : DTypeName(spec.dtype),
          spec.variable_length && spec.dtype == DType::kUint8
              ? absl::StrCat(" (encoded images: decode them first, e.g. decode={'", ft.feature,
                             "': 'image,random_resized_crop=224,flip'})")
              : ""));
    }
    if (spec.decode.kind == DecodeKind::kImage && t.layout == gpu::ImageLayout::kCHW) {
      return absl::InvalidArgumentError(absl::StrCat(
          "transform of '", ft.feature, "': decoded images are HWC uint8 [H, W, 3]: write 'hwc,...' "
          "(the output is NCHW either way)"));
    }
    if (t.channels == 0 && t.height == 0 && t.width == 0 && spec.shape.size() == 3) {
      const bool chw = t.layout == gpu::ImageLayout::kCHW;
      t.channels = static_cast<int>(chw ? spec.shape[0] : spec.shape[2]);
      t.height = static_cast<int>(chw ? spec.shape[1] : spec.shape[0]);
      t.width = static_cast<int>(chw ? spec.shape[2] : spec.shape[1]);
    }
    if (absl::Status s = t.Validate(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("feature '", ft.feature, "': ", s.message()));
    }
    const std::vector<int64_t> want =
        t.layout == gpu::ImageLayout::kCHW
            ? std::vector<int64_t>{t.channels, t.height, t.width}
            : std::vector<int64_t>{t.height, t.width, t.channels};
    if (spec.shape != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          "transform of '", ft.feature, "': the feature's shape is [",
          absl::StrJoin(spec.shape, ","), "], the transform expects [", absl::StrJoin(want, ","),
          "] (", t.layout == gpu::ImageLayout::kCHW ? "CHW" : "HWC", ")"));
    }
    if ((*transform_of)[f] >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature '", ft.feature, "' has more than one transform"));
    }
    (*transform_of)[f] = static_cast<int>(i);
  }
  return absl::OkStatus();
}

absl::StatusOr<FeatureTransform> ParseTransform(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("transform '", text, "': ", why));
  };
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return bad("expected FEATURE=LAYOUT[,OPTION...]");
  FeatureTransform ft;
  ft.feature = text.substr(0, eq);
  std::vector<std::string> parts = absl::StrSplit(text.substr(eq + 1), ',');
  gpu::ImageTransform& t = ft.transform;
  if (parts[0] == "chw") {
    t.layout = gpu::ImageLayout::kCHW;
  } else if (parts[0] == "hwc") {
    t.layout = gpu::ImageLayout::kHWC;
  } else {
    return bad(absl::StrCat("layout '", parts[0], "' is not chw or hwc"));
  }
  auto floats = [&](const std::string& list, std::vector<float>* out) -> absl::Status {
    for (absl::string_view v : absl::StrSplit(list, '/')) {
      float x;
      if (!absl::SimpleAtof(v, &x)) return bad(absl::StrCat("'", v, "' is not a number"));
      out->push_back(x);
    }
    return absl::OkStatus();
  };
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const size_t k = p.find('=');
    const std::string key = p.substr(0, k), value = k == std::string::npos ? "" : p.substr(k + 1);
    int64_t n = 0;
    if (p == "float32") {
      t.output = gpu::OutputType::kFloat32;
    } else if (p == "float16") {
      t.output = gpu::OutputType::kFloat16;
    } else if (p == "bfloat16") {
      t.output = gpu::OutputType::kBFloat16;
    } else if (p == "flip") {
      t.flip = true;
    } else if (p == "cifar10") {
      t.mean = {0.4914f, 0.4822f, 0.4465f};
      t.std = {0.2470f, 0.2435f, 0.2616f};
    } else if (p == "imagenet") {  // torchvision's ImageNet normalization
      t.mean = {0.485f, 0.456f, 0.406f};
      t.std = {0.229f, 0.224f, 0.225f};
    } else if (key == "mean") {
      t.mean.clear();
      if (absl::Status s = floats(value, &t.mean); !s.ok()) return s;
    } else if (key == "std") {
      t.std.clear();
      if (absl::Status s = floats(value, &t.std); !s.ok()) return s;
    } else if (key == "scale") {
      if (!absl::SimpleAtof(value, &t.scale)) return bad(absl::StrCat("scale '", value, "'"));
    } else if (key == "pad" && absl::SimpleAtoi(value, &n) && n >= 0 && n < 0x8000) {
      t.pad = static_cast<int>(n);
    } else if (key == "seed" && absl::SimpleAtoi(value, &n)) {
      t.seed = static_cast<uint64_t>(n);
    } else {
      return bad(absl::StrCat("unknown or malformed option '", p, "'"));
    }
  }
  return ft;
}

Tensor TransformedTensor(const std::string& name, const gpu::ImageTransform& t, int64_t rows,
                         void* data, int device) {
  Tensor out;
  out.name = name;
  out.dtype = DTypeOf(t.output);
  out.shape = {rows, t.channels, t.height, t.width};
  out.data = data;
  out.bytes = rows * t.output_bytes_per_image();
  out.device = device;
  return out;
}

}  // namespace shardfeed
