#include "reader/decode/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace shardfeed {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's PRECISION_BITS
constexpr int32_t kHalf = 1 << (kPrecisionBits - 1);
constexpr int kMaxUnrolled = 8;  // tap counts with a specialized kernel

// The kernels are compiled twice, for AVX2 (8 int32 multiplies a cycle; SSE2
// has no 32-bit multiply) and for the baseline, and the loader picks one per
// machine (GCC function multiversioning). Integer math: same bytes either way.
// Not under ThreadSanitizer: the clones' resolver runs while the dynamic
// loader relocates the binary, before TSan's runtime is set up, and its
// instrumented entry crashed every TSan binary at startup.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
#define SHARDFEED_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SHARDFEED_SIMD_CLONES
#endif

// Per output pixel: the first input pixel, the tap count, and the taps.
// Buffers are reused between calls (see Precompute).
struct Coeffs {
  int ksize = 0;
  std::vector<int> first, count;
  std::vector<int32_t> k;  // out_size * ksize, fixed point
  std::vector<double> w;   // Precompute's work row
};

double Triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's precompute_coeffs + normalize_coeffs_8bpc for the bilinear filter
// (box edges as C floats, as Pillow receives them), into c.
void Precompute(int in_size, float in0, float in1, int out_size, Coeffs* c) {
  const double scale = static_cast<double>(in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = 1.0 * filterscale;
  c->ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c->first.resize(out_size);
  c->count.resize(out_size);
  c->k.assign(static_cast<size_t>(out_size) * c->ksize, 0);
  c->w.resize(c->ksize);
  double* w = c->w.data();
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), in_size) - xmin;
    double ww = 0;
    for (int x = 0; x < xmax; ++x) {
      w[x] = Triangle((x + xmin - center + 0.5) * ss);
      ww += w[x];
    }
    int32_t* k = &c->k[static_cast<size_t>(xx) * c->ksize];
    for (int x = 0; x < xmax; ++x) {
      const double v = (ww != 0.0 ? w[x] / ww : w[x]) * (1 << kPrecisionBits);
      k[x] = static_cast<int32_t>(v < 0 ? v - 0.5 : v + 0.5);
    }
    c->first[xx] = xmin;
    c->count[xx] = std::max(xmax, 0);
  }
}

// Gives every output the same tap count (the largest), moving `first` left
// where the window would run past in_size and padding with zero taps. Integer
// sums do not change with zero terms, so results stay bit-exact; the kernels
// then run a fixed trip count. Returns the common count, or 0 if the input is
// narrower than that count (callers then use the variable-count loop).
int PadToCommonCount(int in_size, Coeffs* c) {
  int kn = 0;
  for (int n : c->count) kn = std::max(kn, n);
  if (kn == 0 || kn > in_size || kn > c->ksize) return 0;
  for (size_t xx = 0; xx < c->first.size(); ++xx) {
    const int shift = c->first[xx] - std::min(c->first[xx], in_size - kn);
    if (shift > 0) {
      int32_t* k = &c->k[xx * c->ksize];
      std::memmove(k + shift, k, sizeof(int32_t) * c->count[xx]);
      std::fill(k, k + shift, 0);
      c->first[xx] -= shift;
    }
    c->count[xx] = kn;
  }
  return kn;
}

// Branch-free so the row loops vectorize.
inline uint8_t Clip8(int32_t v) {
  return static_cast<uint8_t>(std::min(std::max(v >> kPrecisionBits, 0), 255));
}

// Horizontal pass with exactly K taps per output pixel, kTileRows rows at a
// time: the rows' pixels are first laid out column by column (tile[x] holds
// column x of every row, 4 bytes a row: R, G, B and a junk lane that keeps
// each copy one unaligned 32-bit move), so one output pixel's taps become
// multiply-adds over kTileLanes contiguous lanes, which vectorize; the sums
// are the same integers as Pillow's. first[] is nondecreasing (window centers
// increase with the output position), so the columns used are
// [first[0], first[out_w - 1] + K).
constexpr int kTileRows = 8, kTileLanes = 4 * kTileRows;

inline void Copy4(uint8_t* dst, const uint8_t* src) { std::memcpy(dst, src, 4); }

template <int K>
SHARDFEED_SIMD_CLONES void HorizontalFixed(const RgbImage& src, int row0, int rows,
                                           const Coeffs& c, int out_w, bool flip, uint8_t* out) {
  const int x_lo = c.first[0], x_hi = c.first[out_w - 1] + K;
  const int cols = x_hi - x_lo;
  thread_local std::vector<uint8_t> tile;
  tile.resize(static_cast<size_t>(cols) * kTileLanes);
  const size_t out_stride = static_cast<size_t>(out_w) * 3;
  for (int y = 0; y < rows; y += kTileRows) {
    const int n = std::min(kTileRows, rows - y);
    for (int r = 0; r < n; ++r) {
      const uint8_t* in = src.data + (row0 + y + r) * src.stride + x_lo * 3;
      uint8_t* t = tile.data() + 4 * r;
      // 4-byte moves read one byte past each pixel; the last pixel's copy is
      // 3 bytes (its row may end the buffer).
      for (int x = 0; x < cols - 1; ++x) Copy4(t + static_cast<size_t>(x) * kTileLanes, in + 3 * x);
      std::memcpy(t + static_cast<size_t>(cols - 1) * kTileLanes, in + 3 * (cols - 1), 3);
    }
    uint8_t* o = out + static_cast<size_t>(y) * out_stride;
    // Output positions ascend; with flip, position p holds pixel out_w-1-p.
    for (int p = 0; p < out_w; ++p) {
      const int xx = flip ? out_w - 1 - p : p;
      const int32_t* k = &c.k[static_cast<size_t>(xx) * c.ksize];
      const uint8_t* col = tile.data() + static_cast<size_t>(c.first[xx] - x_lo) * kTileLanes;
      int32_t acc[kTileLanes];
      for (int j = 0; j < kTileLanes; ++j) acc[j] = kHalf;
      for (int t = 0; t < K; ++t) {
        const int32_t kt = k[t];
        for (int j = 0; j < kTileLanes; ++j) acc[j] += col[t * kTileLanes + j] * kt;
      }
      uint8_t px[kTileLanes];
      for (int j = 0; j < kTileLanes; ++j) px[j] = Clip8(acc[j]);
      // Each row's pixel as one 4-byte store whose junk byte lands on the
      // next pixel, written after it; the row's last pixel is 3 bytes.
      if (p + 1 < out_w) {
        for (int r = 0; r < n; ++r) Copy4(o + r * out_stride + 3 * p, px + 4 * r);
      } else {
        for (int r = 0; r < n; ++r) std::memcpy(o + r * out_stride + 3 * p, px + 4 * r, 3);
      }
    }
  }
}

// Any tap count per output pixel (Pillow's loop).
void HorizontalAny(const RgbImage& src, int row0, int rows, const Coeffs& c, int out_w, bool flip,
                   uint8_t* out) {
  for (int y = 0; y < rows; ++y) {
    const uint8_t* in = src.data + (row0 + y) * src.stride;
    uint8_t* o = out + static_cast<size_t>(y) * out_w * 3;
    for (int xx = 0; xx < out_w; ++xx) {
      const int32_t* k = &c.k[static_cast<size_t>(xx) * c.ksize];
      const uint8_t* p = in + c.first[xx] * 3;
      int32_t r = kHalf, g = kHalf, b = kHalf;
      for (int x = 0; x < c.count[xx]; ++x) {
        r += p[3 * x] * k[x];
        g += p[3 * x + 1] * k[x];
        b += p[3 * x + 2] * k[x];
      }
      uint8_t* px = o + 3 * (flip ? out_w - 1 - xx : xx);
      px[0] = Clip8(r);
      px[1] = Clip8(g);
      px[2] = Clip8(b);
    }
  }
}

using HorizontalFn = void (*)(const RgbImage&, int, int, const Coeffs&, int, bool, uint8_t*);

template <int... K>
HorizontalFn PickHorizontal(int kn, std::integer_sequence<int, K...>) {
  HorizontalFn fn = HorizontalAny;
  ((fn = (kn == K + 1 ? HorizontalFixed<K + 1> : fn)), ...);
  return fn;
}

// One output row of the vertical pass with exactly K taps: every tap's row is
// read once per output element and the sum stays in registers (the loop over
// i vectorizes; no accumulator array round trips).
// Pointers and taps are copied to locals first: `o` is a uint8_t*, which may
// alias anything, so reading them through memory would block vectorization.
template <int K>
SHARDFEED_SIMD_CLONES void VerticalRow(const uint8_t* const* rows_in, const int32_t* k_in, int n, uint8_t* o) {
  const uint8_t* rows[K];
  int32_t k[K];
  for (int y = 0; y < K; ++y) {
    rows[y] = rows_in[y];
    k[y] = k_in[y];
  }
  for (int i = 0; i < n; ++i) {
    int32_t s = kHalf;
    for (int y = 0; y < K; ++y) s += rows[y][i] * k[y];
    o[i] = Clip8(s);
  }
}

// Any tap count, through an accumulator row.
void VerticalRowAny(const uint8_t* const* rows, const int32_t* k, int count, int n,
                    int32_t* acc, uint8_t* o) {
  std::fill(acc, acc + n, kHalf);
  for (int y = 0; y < count; ++y) {
    const uint8_t* row = rows[y];
    const int32_t ky = k[y];
    for (int i = 0; i < n; ++i) acc[i] += row[i] * ky;
  }
  for (int i = 0; i < n; ++i) o[i] = Clip8(acc[i]);
}

using VerticalRowFn = void (*)(const uint8_t* const*, const int32_t*, int, uint8_t*);

template <int... K>
VerticalRowFn PickVerticalRow(int count, std::integer_sequence<int, K...>) {
  VerticalRowFn fn = nullptr;
  ((fn = (count == K + 1 ? VerticalRow<K + 1> : fn)), ...);
  return fn;
}

// The vertical pass; first[] is relative to `in`'s first row.
void Vertical(const uint8_t* in, size_t in_stride, int width, const Coeffs& c, int row_shift,
              int out_h, uint8_t* out) {
  const int n = width * 3;
  thread_local std::vector<int32_t> acc;
  thread_local std::vector<const uint8_t*> rows;
  rows.resize(c.ksize);
  for (int yy = 0; yy < out_h; ++yy) {
    const int32_t* k = &c.k[static_cast<size_t>(yy) * c.ksize];
    const int count = c.count[yy];
    for (int y = 0; y < count; ++y) rows[y] = in + (c.first[yy] - row_shift + y) * in_stride;
    uint8_t* o = out + static_cast<size_t>(yy) * n;
    const VerticalRowFn fn =
        PickVerticalRow(count, std::make_integer_sequence<int, kMaxUnrolled>());
    if (fn != nullptr) {
      fn(rows.data(), k, n, o);
    } else {
      acc.resize(n);
      VerticalRowAny(rows.data(), k, count, n, acc.data(), o);
    }
  }
}

void FlipRows(uint8_t* out, int w, int h) {
  for (int y = 0; y < h; ++y) {
    uint8_t* row = out + static_cast<size_t>(y) * w * 3;
    for (int a = 0, b = w - 1; a < b; ++a, --b) {
      for (int ch = 0; ch < 3; ++ch) std::swap(row[3 * a + ch], row[3 * b + ch]);
    }
  }
}

}  // namespace

void ResizeBox(const RgbImage& src, double x0, double y0, double x1, double y1, uint8_t* out,
               int out_w, int out_h, bool flip, std::vector<uint8_t>* scratch) {
  const float fx0 = static_cast<float>(x0), fx1 = static_cast<float>(x1);
  const float fy0 = static_cast<float>(y0), fy1 = static_cast<float>(y1);
  const bool need_h = out_w != src.width || fx0 != 0 || fx1 != src.width;
  const bool need_v = out_h != src.height || fy0 != 0 || fy1 != src.height;
  thread_local Coeffs horiz, vert;
  Precompute(src.width, fx0, fx1, out_w, &horiz);
  Precompute(src.height, fy0, fy1, out_h, &vert);
  const int row_first = vert.first[0];
  const int row_last = vert.first[out_h - 1] + vert.count[out_h - 1];
  const uint8_t* mid = src.data;
  size_t mid_stride = src.stride;
  int mid_shift = 0;
  if (need_h) {
    const int rows = need_v ? row_last - row_first : src.height;
    const int row0 = need_v ? row_first : 0;
    uint8_t* dst = need_v ? nullptr : out;
    if (need_v) {
      scratch->resize(static_cast<size_t>(rows) * out_w * 3);
      dst = scratch->data();
    }
    const int kn = PadToCommonCount(src.width, &horiz);
    // The flip is folded into the horizontal pass (each output pixel is
    // computed on its own; the vertical pass works column by column).
    PickHorizontal(kn, std::make_integer_sequence<int, kMaxUnrolled>())(src, row0, rows, horiz,
                                                                        out_w, flip, dst);
    mid = dst;
    mid_stride = static_cast<size_t>(out_w) * 3;
    mid_shift = row0;
  }
  if (need_v) {
    Vertical(mid, mid_stride, out_w, vert, mid_shift, out_h, out);
  } else if (!need_h) {
    for (int y = 0; y < out_h; ++y) {
      std::memcpy(out + static_cast<size_t>(y) * out_w * 3, src.data + y * src.stride,
                  static_cast<size_t>(out_w) * 3);
    }
  }
  if (flip && !need_h) FlipRows(out, out_w, out_h);
}

}  // namespace shardfeed
