// RandomResizedCrop boxes follow torchvision's distribution (statistics over
// many samples), depend only on (seed, sample), and fall back as torchvision
// does; the evaluation box maps Resize + CenterCrop back to the source.
#include "reader/decode/crop_geometry.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace shardfeed {
namespace {

ImageDecodeSpec Rrc() {
  ImageDecodeSpec s;
  s.mode = ImageMode::kRandomResizedCrop;
  s.out_w = s.out_h = 224;
  s.flip = true;
  return s;
}

// Kolmogorov-Smirnov distance of samples from Uniform(lo, hi).
double KsUniform(std::vector<double> v, double lo, double hi) {
  std::sort(v.begin(), v.end());
  double d = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double cdf = (v[i] - lo) / (hi - lo);
    d = std::max({d, std::fabs(cdf - double(i) / v.size()), std::fabs(cdf - double(i + 1) / v.size())});
  }
  return d;
}

// On a large square image every attempt with area * max(r, 1/r) <= 1 fits,
// so boxes of area fraction <= 0.75 are exactly the draws that landed there:
// area uniform on [0.08, 0.75], log-aspect uniform on [log 3/4, log 4/3].
TEST(RandomResizedCrop, FollowsTorchvisionDistribution) {
  const int n = 20000, side = 4000;
  std::vector<double> areas, log_aspects;
  int flips = 0, inside = 0;
  for (int i = 0; i < n; ++i) {
    SampleStream stream(7, i);
    const CropBox b = RandomResizedCropBox(side, side, Rrc(), &stream);
    ASSERT_GE(b.x0, 0);
    ASSERT_GE(b.y0, 0);
    ASSERT_LE(b.x1, side);
    ASSERT_LE(b.y1, side);
    const double w = b.x1 - b.x0, h = b.y1 - b.y0;
    const double area = w * h / (double(side) * side);
    ASSERT_GE(area, 0.079);
    ASSERT_LE(w / h, 4.0 / 3.0 + 1e-3);
    ASSERT_GE(w / h, 3.0 / 4.0 - 1e-3);
    flips += b.flip;
    if (area <= 0.75) {
      areas.push_back(area);
      log_aspects.push_back(std::log(w / h));
    }
    // Offsets uniform: the box center's position in its free range.
    if (w < side && (b.x0 / (side - w)) < 0.5) ++inside;
  }
  // KS critical value at alpha = 0.001: 1.95 / sqrt(n).
  const double crit = 1.95 / std::sqrt(double(areas.size()));
  EXPECT_LT(KsUniform(areas, 0.08, 0.75), crit);
  EXPECT_LT(KsUniform(log_aspects, std::log(0.75), std::log(4.0 / 3.0)), crit);
  EXPECT_NEAR(flips / double(n), 0.5, 0.02);
  EXPECT_NEAR(inside / double(n), 0.5, 0.03);
  // An attempt fits with probability 0.67 (area <= 0.75) plus, above 0.75,
  // the integral of P(|log r| <= -log a) = -log(a) / log(4/3): 0.03424 / 0.28768.
  const double above = (0.25 - 0.75 * std::log(4.0 / 3.0)) / std::log(4.0 / 3.0);
  EXPECT_NEAR(areas.size() / double(n), 0.67 / (0.67 + above), 0.01);
}

TEST(RandomResizedCrop, DependsOnlyOnSeedAndSample) {
  const ImageDecodeSpec spec = Rrc();
  const CropBox a = BoxFor(500, 375, spec, 3, 41), b = BoxFor(500, 375, spec, 3, 41);
  EXPECT_EQ(a.x0, b.x0);
  EXPECT_EQ(a.y1, b.y1);
  EXPECT_EQ(a.flip, b.flip);
  int same = 0;
  for (int i = 0; i < 100; ++i) {
    same += BoxFor(500, 375, spec, 3, i).x0 == BoxFor(500, 375, spec, 4, i).x0;
  }
  EXPECT_LT(same, 20);
}

// A 1000 x 100 strip: no attempt fits the ratio range, so the fallback is
// the center crop clamped to ratio 4/3: h = 100, w = round(133.3) = 133.
TEST(RandomResizedCrop, FallsBackToClampedCenterCrop) {
  SampleStream stream(1, 1);
  const CropBox b = RandomResizedCropBox(1000, 100, Rrc(), &stream);
  EXPECT_EQ(b.x1 - b.x0, 133);
  EXPECT_EQ(b.y1 - b.y0, 100);
  EXPECT_EQ(b.x0, (1000 - 133) / 2);
  EXPECT_EQ(b.y0, 0);
}

// Resize(256) of 500x375: 341x256 (int(256 * 500 / 375)), CenterCrop(224)
// at top round(16) = 16, left round(58.5) = 58 (half to even).
TEST(ResizeCenterCrop, MapsTheCropBackThroughTheResize) {
  const CropBox b = ResizeCenterCropBox(500, 375, 256, 224, 224);
  EXPECT_DOUBLE_EQ(b.x0, 58 * 500.0 / 341);
  EXPECT_DOUBLE_EQ(b.x1, (58 + 224) * 500.0 / 341);
  EXPECT_DOUBLE_EQ(b.y0, 16 * 375.0 / 256);
  EXPECT_DOUBLE_EQ(b.y1, (16 + 224) * 375.0 / 256);
  const CropBox c = ResizeCenterCropBox(300, 200, 0, 100, 100);  // center crop only
  EXPECT_DOUBLE_EQ(c.x0, 100);
  EXPECT_DOUBLE_EQ(c.y0, 50);
}

}  // namespace
}  // namespace shardfeed
