// JPEG through the libjpeg API of libjpeg-turbo. libjpeg reports errors by
// calling error_exit, which must not return: it longjmps back to the one
// frame below that calls libjpeg. Nothing with a destructor is created in that
// frame after setjmp (the pixel buffer belongs to the caller), so the jump
// skips no C++ cleanup.
#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <jpeglib.h>
#include <jerror.h>

#include "absl/strings/str_cat.h"
#include "reader/decode/image_codecs.h"
#include "reader/decode/image_decoder.h"
#include "reader/decode/jpeg_error.h"

namespace shardfeed {
namespace {

using ErrorManager = JpegErrorManager;

// Warnings that mean the entropy-coded data ended early are errors (Pillow
// and tf.image refuse truncated files too); other warnings are counted.
void OnMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  const int code = cinfo->err->msg_code;
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER) JpegErrorExit(cinfo);
  cinfo->err->num_warnings++;
}

absl::Status ErrorStatus(const ErrorManager& e) {
  const std::string what = absl::StrCat("JPEG: ", e.message);
  if (e.code == JERR_NO_SOI || e.code == JERR_INPUT_EMPTY) {
    return absl::InvalidArgumentError(what);
  }
  return absl::DataLossError(what);
}

// Pillow's CMYK -> RGB: an Adobe-marked file stores inverted values.
void CmykToRgb(uint8_t* row, int width, bool adobe) {
  for (int x = 0; x < width; ++x) {
    const uint8_t* in = row + 4 * x;
    const int k = adobe ? 255 - in[3] : in[3];
    const int nk = 255 - k;
    for (int c = 0; c < 3; ++c) {
      const int v = adobe ? 255 - in[c] : in[c];
      const int t = v * nk + 128;
      const int muldiv = ((t >> 8) + t) >> 8;
      row[3 * x + c] = static_cast<uint8_t>(nk - muldiv);
    }
  }
}

}  // namespace

bool LooksLikeJpeg(absl::string_view data) {
  return data.size() >= 3 && static_cast<uint8_t>(data[0]) == 0xFF &&
         static_cast<uint8_t>(data[1]) == 0xD8 && static_cast<uint8_t>(data[2]) == 0xFF;
}

absl::Status DecodeJpegRegion(absl::string_view data, Planner planner, DecodedRegion* out) {
  if (data.empty()) return absl::InvalidArgumentError("JPEG: empty (0 bytes)");
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = JpegErrorExit;
  err.pub.emit_message = OnMessage;
  err.code = 0;
  err.message[0] = '\0';
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return ErrorStatus(err);
  }
  jpeg_create_decompress(&cinfo);
  cinfo.mem->max_memory_to_use = kMaxJpegMemory;
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(data.data()),
               static_cast<unsigned long>(data.size()));
  jpeg_read_header(&cinfo, TRUE);
  // Rows below the crop are never decoded, so a truncated file would pass
  // or fail depending on the crop: require the end-of-image marker (FF D9
  // cannot occur inside entropy-coded data) after the header. It is
  // normally the last two bytes: searched from the end.
  const size_t scan_start = data.size() - cinfo.src->bytes_in_buffer;
  const size_t eoi = data.rfind("\xff\xd9");
  if (eoi == absl::string_view::npos || eoi < scan_start) {
    jpeg_destroy_decompress(&cinfo);
    return absl::DataLossError("JPEG: truncated (no end-of-image marker)");
  }
  const int64_t pixels = static_cast<int64_t>(cinfo.image_width) * cinfo.image_height;
  if (pixels > kMaxImagePixels || pixels == 0) {
    const std::string what = absl::StrCat("JPEG: ", cinfo.image_width, "x", cinfo.image_height,
                                          " pixels is outside 1..", kMaxImagePixels);
    jpeg_destroy_decompress(&cinfo);
    return absl::InvalidArgumentError(what);
  }
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  cinfo.dct_method = JDCT_ISLOW;  // Pillow's settings: accurate IDCT,
  cinfo.do_fancy_upsampling = TRUE;  // smooth chroma upsampling
  out->plan = planner(cinfo.image_width, cinfo.image_height, /*can_scale=*/true);
  const DecodePlan& plan = out->plan;
  if (plan.header_only) {
    jpeg_destroy_decompress(&cinfo);
    return absl::OkStatus();
  }
  cinfo.scale_num = 1;
  cinfo.scale_denom = plan.denom;
  jpeg_start_decompress(&cinfo);
  // jpeg_crop_scanline's edges replicate chroma instead of upsampling from
  // the neighbors, so a margin keeps those columns outside the region: the
  // region's pixels then equal the full decode's.
  constexpr int kMargin = 8;
  const int right = std::min<int>(cinfo.output_width, plan.x0 + plan.w + kMargin);
  JDIMENSION xoff = std::max(0, plan.x0 - kMargin);
  JDIMENSION width = right - xoff;
  if (width < cinfo.output_width) jpeg_crop_scanline(&cinfo, &xoff, &width);
  const int comps = cinfo.output_components;
  const size_t stride = static_cast<size_t>(cinfo.output_width) * comps;
  out->pixels.resize(stride * plan.h);
  if (plan.y0 > 0) jpeg_skip_scanlines(&cinfo, plan.y0);
  // Several rows a call: with 2x2 chroma the upsampler makes two rows at a
  // time, and asking for one costs a copy through its spare row.
  constexpr int kRowsPerCall = 16;
  JSAMPROW rows[kRowsPerCall];
  for (int y = 0; y < plan.h;) {
    const int want = std::min(kRowsPerCall, plan.h - y);
    for (int r = 0; r < want; ++r) rows[r] = out->pixels.data() + (y + r) * stride;
    const int got = static_cast<int>(jpeg_read_scanlines(&cinfo, rows, want));
    if (got <= 0) ERREXIT(&cinfo, JERR_INPUT_EOF);
    if (cmyk) {
      for (int r = 0; r < got; ++r) CmykToRgb(rows[r], cinfo.output_width, cinfo.saw_Adobe_marker);
    }
    y += got;
  }
  jpeg_destroy_decompress(&cinfo);
  // CMYK rows were compacted in place to RGB: 3 bytes a pixel, same stride.
  out->image.data = out->pixels.data() + (plan.x0 - xoff) * 3;
  out->image.width = plan.w;
  out->image.height = plan.h;
  out->image.stride = stride;
  return absl::OkStatus();
}

}  // namespace shardfeed
