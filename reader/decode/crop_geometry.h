// Crop geometry of the image decode stage: which box of the source image
// becomes the output row, with torchvision's semantics, drawn from the
// counter-based per-sample stream (seed, delivery number) of
// gpu/augment_rng.h, so a sample's crop never depends on thread timing.
// Pure functions; thread-safe.
#ifndef SHARDFEED_READER_DECODE_CROP_GEOMETRY_H_
#define SHARDFEED_READER_DECODE_CROP_GEOMETRY_H_

#include <cstdint>

#include "reader/decode/decode_spec.h"

namespace shardfeed {

// Uniform draws in [0, 1) from SplitMix64 over (seed, sample, k).
class SampleStream {
 public:
  SampleStream(uint64_t seed, uint64_t sample);
  double Uniform();
  uint64_t Next();

 private:
  uint64_t base_;
  uint64_t k_ = 0;
};

// A box in source pixel coordinates [x0, x1) x [y0, y1), possibly fractional
// (resize + center crop maps the crop back through the resize).
struct CropBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool flip = false;
};

// torchvision RandomResizedCrop.get_params: area fraction uniform in
// [scale_min, scale_max], log-uniform aspect in [ratio_min, ratio_max],
// w = round(sqrt(area * aspect)), h = round(sqrt(area / aspect)); the first of
// 10 attempts that fits, at a uniform integer offset; else the center crop
// clamped to the ratio range. The flip bit is drawn after the box.
CropBox RandomResizedCropBox(int width, int height, const ImageDecodeSpec& spec,
                             SampleStream* stream);

// torchvision Resize(resize) (shorter side; the longer int(resize * long /
// short)) then CenterCrop(out) (offsets round((size - out) / 2)), mapped back
// to the source. resize == 0: the center crop of the image as it is.
CropBox ResizeCenterCropBox(int width, int height, int resize, int out_w, int out_h);

// The box for any ImageDecodeSpec (kResize: the whole image).
CropBox BoxFor(int width, int height, const ImageDecodeSpec& spec, uint64_t seed,
               uint64_t sample);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODE_CROP_GEOMETRY_H_
