// libjpeg reports errors through error_exit, which must not return: it
// longjmps back to EncodeJpeg's frame, where nothing with a destructor is
// created after setjmp (the output buffer is libjpeg's, freed on both paths).
#include "reader/decode/jpeg_encoder.h"

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <jpeglib.h>

#include "absl/strings/str_cat.h"
#include "reader/decode/image_decoder.h"
#include "reader/decode/jpeg_error.h"
#include "reader/decode/resize.h"

namespace shardfeed {

absl::StatusOr<std::string> EncodeJpeg(const uint8_t* rgb, int width, int height, int quality) {
  if (width <= 0 || height <= 0 || quality < 1 || quality > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("JPEG encode: bad size ", width, "x", height, " or quality ", quality));
  }
  jpeg_compress_struct cinfo;
  JpegErrorManager err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = JpegErrorExit;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(buffer);
    return absl::InternalError(absl::StrCat("JPEG encode: ", err.message));
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);  // 4:2:0, Huffman-optimized off, baseline
  jpeg_set_quality(&cinfo, quality, TRUE);
  cinfo.dct_method = JDCT_ISLOW;
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(rgb) + static_cast<size_t>(cinfo.next_scanline) * width * 3;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return out;
}

absl::StatusOr<Reencoded> ShrinkToMaxSide(absl::string_view encoded, int max_side, int quality) {
  DecodedImage full;
  absl::Status s = DecodeImageFull(encoded, &full);
  if (!s.ok()) return s;
  Reencoded r;
  const int longer = std::max(full.width, full.height);
  if (longer <= max_side) return r;
  const double scale = static_cast<double>(max_side) / longer;
  r.width = std::max(1, static_cast<int>(std::lround(full.width * scale)));
  r.height = std::max(1, static_cast<int>(std::lround(full.height * scale)));
  std::vector<uint8_t> small(static_cast<size_t>(r.width) * r.height * 3), scratch;
  const RgbImage src{full.rgb.data(), full.width, full.height, static_cast<size_t>(full.width) * 3};
  ResizeBox(src, 0, 0, full.width, full.height, small.data(), r.width, r.height, false, &scratch);
  absl::StatusOr<std::string> jpeg = EncodeJpeg(small.data(), r.width, r.height, quality);
  if (!jpeg.ok()) return jpeg.status();
  r.changed = true;
  r.bytes = std::move(*jpeg);
  return r;
}

}  // namespace shardfeed
