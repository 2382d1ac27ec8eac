// ResizeBox against a plain transcription of Pillow's ImagingResample for the
// bilinear filter (variable tap count per pixel, accumulator rows): the fast
// kernels (zero-padded common tap count, unrolled vertical taps) must give the
// same bytes for every box, scale and size, including upscales, windows that
// touch the image's edges, and tap counts beyond the unrolled ones. Pillow
// itself is checked through the fixtures in image_decoder_test.cc.
#include "reader/decode/resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace shardfeed {
namespace {

constexpr int kBits = 22;

struct Taps {
  std::vector<int> first, count;
  std::vector<std::vector<int32_t>> k;
};

Taps ReferenceTaps(int in_size, float in0, float in1, int out_size) {
  const double scale = static_cast<double>(in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = filterscale;
  Taps t;
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), in_size) - xmin;
    std::vector<double> w(std::max(xmax, 0));
    double ww = 0;
    for (int x = 0; x < xmax; ++x) {
      const double d = std::fabs((x + xmin - center + 0.5) / filterscale);
      w[x] = d < 1.0 ? 1.0 - d : 0.0;
      ww += w[x];
    }
    std::vector<int32_t> k(w.size());
    for (size_t x = 0; x < w.size(); ++x) {
      const double v = (ww != 0.0 ? w[x] / ww : w[x]) * (1 << kBits);
      k[x] = static_cast<int32_t>(v < 0 ? v - 0.5 : v + 0.5);
    }
    t.first.push_back(xmin);
    t.count.push_back(std::max(xmax, 0));
    t.k.push_back(k);
  }
  return t;
}

uint8_t Clip(int64_t v) { return static_cast<uint8_t>(std::clamp<int64_t>(v >> kBits, 0, 255)); }

// Horizontal over rows [y0, y1) into 8 bits, then vertical; Pillow's order.
std::vector<uint8_t> Reference(const std::vector<uint8_t>& img, int w, int h, float x0, float y0,
                               float x1, float y1, int ow, int oh) {
  const Taps th = ReferenceTaps(w, x0, x1, ow), tv = ReferenceTaps(h, y0, y1, oh);
  const int r0 = tv.first[0], r1 = tv.first[oh - 1] + tv.count[oh - 1];
  std::vector<uint8_t> mid(static_cast<size_t>(r1 - r0) * ow * 3), out(size_t{3} * ow * oh);
  for (int y = r0; y < r1; ++y) {
    for (int xx = 0; xx < ow; ++xx) {
      for (int c = 0; c < 3; ++c) {
        int64_t s = 1 << (kBits - 1);
        for (int x = 0; x < th.count[xx]; ++x) {
          s += img[(static_cast<size_t>(y) * w + th.first[xx] + x) * 3 + c] * th.k[xx][x];
        }
        mid[(static_cast<size_t>(y - r0) * ow + xx) * 3 + c] = Clip(s);
      }
    }
  }
  for (int yy = 0; yy < oh; ++yy) {
    for (int i = 0; i < ow * 3; ++i) {
      int64_t s = 1 << (kBits - 1);
      for (int y = 0; y < tv.count[yy]; ++y) {
        s += mid[static_cast<size_t>(tv.first[yy] + y - r0) * ow * 3 + i] * tv.k[yy][y];
      }
      out[static_cast<size_t>(yy) * ow * 3 + i] = Clip(s);
    }
  }
  return out;
}

std::vector<uint8_t> Mirrored(const std::vector<uint8_t>& img, int w, int h) {
  std::vector<uint8_t> m(img.size());
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        m[(static_cast<size_t>(y) * w + x) * 3 + c] =
            img[(static_cast<size_t>(y) * w + (w - 1 - x)) * 3 + c];
      }
    }
  }
  return m;
}

// Random crops of a random-ish image (smooth gradient + noise, so that
// rounding differences would show) at output sizes from 1/12x to 3x; every
// other box flipped (the flip is folded into the horizontal pass). The image
// buffer has no slack past its last pixel (ASan builds catch over-reads).
TEST(ResizeBox, EqualsPillowReferenceOnRandomBoxes) {
  std::mt19937 rng(13);
  const int w = 181, h = 137;
  std::vector<uint8_t> img(size_t{3} * w * h);
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<uint8_t>((i * 7 + rng() % 64) & 255);
  std::vector<uint8_t> scratch;
  for (int trial = 0; trial < 400; ++trial) {
    std::uniform_real_distribution<float> ux(0, w - 1), uy(0, h - 1);
    float x0 = ux(rng), x1 = ux(rng), y0 = uy(rng), y1 = uy(rng);
    if (trial % 4 == 0) x0 = 0, x1 = w, y0 = 0, y1 = h;  // whole image
    if (x1 - x0 < 1 && x0 - x1 < 1) continue;
    if (y1 - y0 < 1 && y0 - y1 < 1) continue;
    if (x1 < x0) std::swap(x0, x1);
    if (y1 < y0) std::swap(y0, y1);
    const int ow = 1 + static_cast<int>(rng() % 200), oh = 1 + static_cast<int>(rng() % 150);
    const RgbImage src{img.data(), w, h, size_t{3} * w};
    std::vector<uint8_t> got(size_t{3} * ow * oh);
    const bool flip = trial % 2 == 1;
    ResizeBox(src, x0, y0, x1, y1, got.data(), ow, oh, flip, &scratch);
    std::vector<uint8_t> want = Reference(img, w, h, x0, y0, x1, y1, ow, oh);
    if (flip) want = Mirrored(want, ow, oh);
    ASSERT_EQ(got, want) << "box " << x0 << "," << y0 << "," << x1 << "," << y1 << " -> " << ow
                         << "x" << oh << (flip ? " flipped" : "");
  }
}

// The training shape: ~300x250 crops of a 500x375 photo to 224x224 (3 to 6
// taps), and upscales of small crops (2 to 3 taps).
TEST(ResizeBox, EqualsPillowReferenceOnTrainingCrops) {
  std::mt19937 rng(7);
  const int w = 500, h = 375;
  std::vector<uint8_t> img(size_t{3} * w * h);
  for (auto& v : img) v = static_cast<uint8_t>(rng());
  std::vector<uint8_t> scratch, got(224 * 224 * 3);
  const RgbImage src{img.data(), w, h, size_t{3} * w};
  for (auto [x0, y0, x1, y1] : {std::tuple{37.f, 50.f, 337.f, 310.f},
                                std::tuple{0.f, 0.f, 500.f, 375.f},
                                std::tuple{120.5f, 80.25f, 230.f, 190.f},
                                std::tuple{400.f, 300.f, 500.f, 375.f}}) {
    for (bool flip : {false, true}) {
      ResizeBox(src, x0, y0, x1, y1, got.data(), 224, 224, flip, &scratch);
      std::vector<uint8_t> want = Reference(img, w, h, x0, y0, x1, y1, 224, 224);
      if (flip) want = Mirrored(want, 224, 224);
      EXPECT_EQ(got, want) << x0 << "," << y0 << (flip ? " flipped" : "");
    }
  }
}

}  // namespace
}  // namespace shardfeed
