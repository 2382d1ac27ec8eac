// PNG through libspng: every color type and bit depth decoded to RGB8
// (alpha dropped, 16-bit samples reduced to their high byte, no gamma).
#include <spng.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "reader/decode/image_codecs.h"
#include "reader/decode/image_decoder.h"

namespace shardfeed {
namespace {

struct CtxFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};

absl::Status SpngError(int code) {
  const std::string what = absl::StrCat("PNG: ", spng_strerror(code));
  if (code == SPNG_ESIGNATURE) return absl::InvalidArgumentError(what);
  return absl::DataLossError(what);
}

}  // namespace

bool LooksLikePng(absl::string_view data) {
  return data.size() >= 8 && data.substr(0, 8) == absl::string_view("\x89PNG\r\n\x1a\n", 8);
}

absl::Status DecodePngRegion(absl::string_view data, Planner planner, DecodedRegion* out) {
  std::unique_ptr<spng_ctx, CtxFree> ctx(spng_ctx_new(0));
  if (ctx == nullptr) return absl::ResourceExhaustedError("PNG: spng_ctx_new failed");
  // Ancillary chunks (text, ICC profiles) are capped so a hostile file cannot
  // make the decoder buffer much more than its pixels.
  spng_set_chunk_limits(ctx.get(), 1 << 24, 1 << 26);
  int r = spng_set_png_buffer(ctx.get(), data.data(), data.size());
  if (r != 0) return SpngError(r);
  spng_ihdr ihdr;
  if ((r = spng_get_ihdr(ctx.get(), &ihdr)) != 0) return SpngError(r);
  const int64_t pixels = static_cast<int64_t>(ihdr.width) * ihdr.height;
  if (pixels > kMaxImagePixels || pixels == 0) {
    return absl::InvalidArgumentError(absl::StrCat("PNG: ", ihdr.width, "x", ihdr.height,
                                                   " pixels is outside 1..", kMaxImagePixels));
  }
  out->plan = planner(static_cast<int>(ihdr.width), static_cast<int>(ihdr.height),
                      /*can_scale=*/false);
  if (out->plan.header_only) {
    // The image ends with the IEND chunk (after the 8-byte signature and the
    // 25-byte IHDR chunk): a file cut short has none.
    constexpr size_t kFirstChunkAfterIhdr = 33;
    const size_t iend = data.rfind("IEND");
    if (iend == absl::string_view::npos || iend < kFirstChunkAfterIhdr + 4) {
      return absl::DataLossError("PNG: truncated (no IEND chunk)");
    }
    return absl::OkStatus();
  }
  size_t size = 0;
  if ((r = spng_decoded_image_size(ctx.get(), SPNG_FMT_RGB8, &size)) != 0) return SpngError(r);
  out->pixels.resize(size);
  r = spng_decode_image(ctx.get(), out->pixels.data(), size, SPNG_FMT_RGB8, 0);
  if (r != 0) return SpngError(r);
  const size_t stride = static_cast<size_t>(ihdr.width) * 3;
  const DecodePlan& plan = out->plan;
  out->image.data = out->pixels.data() + plan.y0 * stride + plan.x0 * 3;
  out->image.width = plan.w;
  out->image.height = plan.h;
  out->image.stride = stride;
  return absl::OkStatus();
}

}  // namespace shardfeed
