// Antialiased resize of an RGB uint8 region: the triangle (bilinear) filter
// widened by the downscale factor, as Pillow's Image.resize(BILINEAR, box=)
// and torchvision's Resize(antialias=True) compute it. Same coefficient
// rounding (22-bit fixed point), same pass order (horizontal, then vertical
// through an 8-bit intermediate), so results equal Pillow's bit for bit on
// the same box. Thread-safe; the caller owns src, out and scratch (taps and
// tiles live in per-thread buffers reused between calls, so steady-state
// calls allocate nothing). Speed: the horizontal pass runs over 8-row
// column-major tiles and the vertical one over whole rows, both vectorized
// (AVX2 where the CPU has it), with the same integer sums as Pillow.
#ifndef SHARDFEED_READER_DECODE_RESIZE_H_
#define SHARDFEED_READER_DECODE_RESIZE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardfeed {

struct RgbImage {
  const uint8_t* data = nullptr;
  int width = 0, height = 0;
  size_t stride = 0;  // bytes per row
};

// Resamples src's box [x0, x1) x [y0, y1) (fractional, inside src) to
// out_w x out_h RGB written densely to out, mirrored left-right when flip.
// scratch is reused between calls to avoid allocations.
void ResizeBox(const RgbImage& src, double x0, double y0, double x1, double y1, uint8_t* out,
               int out_w, int out_h, bool flip, std::vector<uint8_t>* scratch);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODE_RESIZE_H_
