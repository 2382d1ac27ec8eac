// Image decoding for the decode stage: an encoded JPEG or PNG becomes a
// fixed-shape uint8 [out_h, out_w, 3] row, cropped and resized as its
// ImageDecodeSpec says, decoded straight into the caller's row.
//
// JPEG (libjpeg-turbo, the libjpeg API): JDCT_ISLOW and fancy upsampling,
// the settings Pillow uses, so a full decode equals Pillow's pixels; only
// the crop's columns (jpeg_crop_scanline) and rows (jpeg_skip_scanlines) are
// decoded, at 1/2, 1/4 or 1/8 scale in the DCT domain when the crop is at
// least that many times the output (ImageDecodeSpec::dct_scaling).
// Grayscale and CMYK/YCCK become RGB (CMYK as Pillow converts it).
// PNG (libspng): gray, palette, alpha (dropped, as Pillow's convert("RGB")),
// 16-bit (the high byte) all become RGB8.
//
// Errors: INVALID_ARGUMENT for what is not a JPEG/PNG (GIF, WebP, empty), a
// format other than the spec's format=, or more than kMaxImagePixels pixels
// (refused from the header, before any pixel memory is allocated);
// DATA_LOSS for truncated or corrupt data. Memory per call is bounded by the
// pixel limit (libjpeg's own pool is capped at kMaxJpegMemory).
// Thread-safe: decoders keep no state between calls.
#ifndef SHARDFEED_READER_DECODE_IMAGE_DECODER_H_
#define SHARDFEED_READER_DECODE_IMAGE_DECODER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "reader/decode/decode_spec.h"

namespace shardfeed {

constexpr int64_t kMaxImagePixels = int64_t{1} << 26;  // e.g. 8192 x 8192
constexpr long kMaxJpegMemory = 512L << 20;  // a 64M-pixel 4:4:4 progressive needs 384 MB

// A decoder behind which a GPU decoder (nvJPEG) can be added later: it gets
// the encoded bytes and the per-sample stream key, and fills one row.
class ImageDecoder {
 public:
  virtual ~ImageDecoder() = default;
  virtual const char* name() const = 0;
  // out: spec.out_h * spec.out_w * 3 bytes. (seed, sample) key the random
  // crop and flip (see crop_geometry.h).
  virtual absl::Status DecodeInto(absl::string_view encoded, const ImageDecodeSpec& spec,
                                  uint64_t seed, uint64_t sample, uint8_t* out) const = 0;
};

// The CPU decoder (libjpeg-turbo + libspng); a process-wide stateless object.
const ImageDecoder& CpuImageDecoder();

struct DecodedImage {
  std::vector<uint8_t> rgb;  // height rows of width * 3 bytes
  int width = 0, height = 0;
};

// The whole image at full size, no resampling (tests and tools).
absl::Status DecodeImageFull(absl::string_view encoded, DecodedImage* out);

// Whether the decode stage can decode `encoded` (for `shardfeed check`),
// with DecodeInto's errors. header_only: what the header says (JPEG or PNG,
// a header that parses, at most kMaxImagePixels, a JPEG's end-of-image
// marker, a PNG's IEND chunk: a file cut short fails), decoding no pixels;
// else a whole decode at full size (corrupt entropy-coded or zlib data
// fails too). Thread-safe; pixel buffers are per thread, large ones freed.
absl::Status VerifyImage(absl::string_view encoded, bool header_only);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODE_IMAGE_DECODER_H_
