// Internal to the image decoder: the decode plan (which scaled region of an
// image to decode, and which box of it to resample) and the two codecs that
// decode a planned region. See image_decoder.h for the contract.
#ifndef SHARDFEED_READER_DECODE_IMAGE_CODECS_H_
#define SHARDFEED_READER_DECODE_IMAGE_CODECS_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "reader/decode/crop_geometry.h"
#include "reader/decode/decode_spec.h"
#include "reader/decode/resize.h"

namespace shardfeed {

struct DecodePlan {
  int denom = 1;                 // DCT scaling: decode at 1/denom
  int x0 = 0, y0 = 0, w = 0, h = 0;  // region, in scaled pixels
  double bx0 = 0, by0 = 0, bx1 = 0, by1 = 0;  // box to resample, region-relative
  bool flip = false;
  // Stop after the header checks (format, size, a JPEG's end-of-image
  // marker, a PNG's IEND): decode no pixels.
  bool header_only = false;
};

// Called once the header gave the image's size; can_scale: the codec can
// decode at 1/2, 1/4, 1/8 (the plan's region is then in scaled pixels,
// ceil(width / denom) x ceil(height / denom)).
using Planner = absl::FunctionRef<DecodePlan(int width, int height, bool can_scale)>;

// The decoded region: `image` views `pixels` (RGB).
struct DecodedRegion {
  std::vector<uint8_t> pixels;
  RgbImage image;
  DecodePlan plan;
};

// Decodes `encoded` into out (spec.out_h x spec.out_w x 3), resampling the
// box that box_for(width, height) returns (exposed for tests that pick the box).
using BoxFn = absl::FunctionRef<CropBox(int width, int height)>;
absl::Status DecodeBoxInto(absl::string_view encoded, const ImageDecodeSpec& spec, BoxFn box_for,
                           uint8_t* out);

bool LooksLikeJpeg(absl::string_view data);
bool LooksLikePng(absl::string_view data);

// Both refuse images over kMaxImagePixels before allocating pixel memory.
absl::Status DecodeJpegRegion(absl::string_view data, Planner planner, DecodedRegion* out);
absl::Status DecodePngRegion(absl::string_view data, Planner planner, DecodedRegion* out);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODE_IMAGE_CODECS_H_
