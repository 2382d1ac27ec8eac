#include "reader/feature_transforms.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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
                               const std::vector<FeatureTransform>& transforms,
                               std::vector<int>* transform_of) {
  transform_of->assign(features.size(), -1);
  for (size_t i = 0; i < transforms.size(); ++i) {
    const FeatureTransform& ft = transforms[i];
    const gpu::ImageTransform& t = ft.transform;
    if (absl::Status s = t.Validate(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("feature '", ft.feature, "': ", s.message()));
    }
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
          spec.variable_length ? "variable-length bytes" : DTypeName(spec.dtype)));
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
