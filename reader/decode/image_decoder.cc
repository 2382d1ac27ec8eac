#include "reader/decode/image_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "reader/decode/crop_geometry.h"
#include "reader/decode/image_codecs.h"

namespace shardfeed {
namespace {

int CeilDiv(int a, int d) { return (a + d - 1) / d; }

// The largest DCT scale 1/d (d in 8, 4, 2) that keeps the crop at least as
// large as the output in both directions.
int ChooseDenom(const CropBox& box, const ImageDecodeSpec& spec) {
  const double bw = box.x1 - box.x0, bh = box.y1 - box.y0;
  for (int d : {8, 4, 2}) {
    if (bw >= static_cast<double>(d) * spec.out_w && bh >= static_cast<double>(d) * spec.out_h) {
      return d;
    }
  }
  return 1;
}

// One axis of the region: [lo, hi) in scaled pixels and the box inside it.
// crop_is_image: the crop is resampled as an image of its own (torchvision's
// crop-then-resize), else as a box of the whole image (resize then crop), so
// the region takes the filter's support around the box.
void PlanAxis(double b0, double b1, int size, int out, bool crop_is_image, int* lo, int* len,
              double* r0, double* r1) {
  int a, z;
  if (crop_is_image) {
    a = static_cast<int>(std::floor(b0 + 1e-9));
    z = static_cast<int>(std::ceil(b1 - 1e-9));
  } else {
    const double support = std::max((b1 - b0) / out, 1.0);
    a = static_cast<int>(std::floor(b0 - support)) - 1;
    z = static_cast<int>(std::ceil(b1 + support)) + 1;
  }
  a = std::clamp(a, 0, size - 1);
  z = std::clamp(z, a + 1, size);
  *lo = a;
  *len = z - a;
  *r0 = std::clamp(b0 - a, 0.0, double(*len));
  *r1 = std::clamp(b1 - a, *r0, double(*len));
  if (*r1 - *r0 <= 0) *r0 = 0, *r1 = *len;
}

DecodePlan PlanFor(int width, int height, bool can_scale, const ImageDecodeSpec& spec,
                   const CropBox& box) {
  DecodePlan plan;
  plan.flip = box.flip;
  plan.denom = can_scale && spec.dct_scaling ? ChooseDenom(box, spec) : 1;
  const int sw = CeilDiv(width, plan.denom), sh = CeilDiv(height, plan.denom);
  const double sx = static_cast<double>(sw) / width, sy = static_cast<double>(sh) / height;
  const bool crop_is_image = spec.mode == ImageMode::kRandomResizedCrop;
  PlanAxis(box.x0 * sx, box.x1 * sx, sw, spec.out_w, crop_is_image, &plan.x0, &plan.w, &plan.bx0,
           &plan.bx1);
  PlanAxis(box.y0 * sy, box.y1 * sy, sh, spec.out_h, crop_is_image, &plan.y0, &plan.h, &plan.by0,
           &plan.by1);
  return plan;
}

std::string Signature(absl::string_view data) {
  std::string hex;
  for (size_t i = 0; i < std::min<size_t>(data.size(), 4); ++i) {
    absl::StrAppendFormat(&hex, " %02x", static_cast<uint8_t>(data[i]));
  }
  return hex;
}

absl::Status DecodeRegion(absl::string_view data, ImageDecodeSpec::Format format,
                          Planner planner, DecodedRegion* region) {
  using Format = ImageDecodeSpec::Format;
  if (data.empty()) return absl::InvalidArgumentError("image is empty (0 bytes)");
  const bool jpeg = LooksLikeJpeg(data), png = LooksLikePng(data);
  if (!jpeg && !png) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a JPEG or PNG image (starts with", Signature(data), ")"));
  }
  if ((format == Format::kJpeg && !jpeg) || (format == Format::kPng && !png)) {
    return absl::InvalidArgumentError(absl::StrCat("is a ", jpeg ? "JPEG" : "PNG",
                                                   " image, but the decode spec says format=",
                                                   format == Format::kJpeg ? "jpeg" : "png"));
  }
  return jpeg ? DecodeJpegRegion(data, planner, region) : DecodePngRegion(data, planner, region);
}

// The plan of a whole image at full size, no resampling.
DecodePlan WholeImage(int width, int height, bool header_only) {
  DecodePlan p;
  p.w = width;
  p.h = height;
  p.bx1 = width;
  p.by1 = height;
  p.header_only = header_only;
  return p;
}

class CpuDecoder : public ImageDecoder {
 public:
  const char* name() const override { return "cpu"; }

  absl::Status DecodeInto(absl::string_view encoded, const ImageDecodeSpec& spec, uint64_t seed,
                          uint64_t sample, uint8_t* out) const override {
    return DecodeBoxInto(
        encoded, spec, [&](int w, int h) { return BoxFor(w, h, spec, seed, sample); }, out);
  }
};

}  // namespace

absl::Status DecodeBoxInto(absl::string_view encoded, const ImageDecodeSpec& spec, BoxFn box_for,
                           uint8_t* out) {
  // Per-thread buffers, reused between images; large ones are released.
  thread_local DecodedRegion region;
  thread_local std::vector<uint8_t> scratch;
  auto planner = [&](int w, int h, bool can_scale) {
    return PlanFor(w, h, can_scale, spec, box_for(w, h));
  };
  absl::Status s = DecodeRegion(encoded, spec.format, planner, &region);
  if (s.ok()) {
    const DecodePlan& p = region.plan;
    ResizeBox(region.image, p.bx0, p.by0, p.bx1, p.by1, out, spec.out_w, spec.out_h, p.flip,
              &scratch);
  }
  constexpr size_t kKeep = size_t{64} << 20;
  if (region.pixels.capacity() > kKeep) std::vector<uint8_t>().swap(region.pixels);
  if (scratch.capacity() > kKeep) std::vector<uint8_t>().swap(scratch);
  return s;
}

const ImageDecoder& CpuImageDecoder() {
  static const CpuDecoder* decoder = new CpuDecoder;
  return *decoder;
}

absl::Status VerifyImage(absl::string_view encoded, bool header_only) {
  thread_local DecodedRegion region;
  auto planner = [header_only](int w, int h, bool) { return WholeImage(w, h, header_only); };
  absl::Status s = DecodeRegion(encoded, ImageDecodeSpec::Format::kAny, planner, &region);
  constexpr size_t kKeep = size_t{64} << 20;
  if (region.pixels.capacity() > kKeep) std::vector<uint8_t>().swap(region.pixels);
  return s;
}

absl::Status DecodeImageFull(absl::string_view encoded, DecodedImage* out) {
  DecodedRegion region;
  auto planner = [](int w, int h, bool) { return WholeImage(w, h, /*header_only=*/false); };
  absl::Status s = DecodeRegion(encoded, ImageDecodeSpec::Format::kAny, planner, &region);
  if (!s.ok()) return s;
  out->width = region.image.width;
  out->height = region.image.height;
  out->rgb.resize(static_cast<size_t>(out->width) * out->height * 3);
  for (int y = 0; y < out->height; ++y) {
    std::memcpy(out->rgb.data() + static_cast<size_t>(y) * out->width * 3,
                region.image.data + y * region.image.stride, static_cast<size_t>(out->width) * 3);
  }
  return absl::OkStatus();
}

}  // namespace shardfeed
