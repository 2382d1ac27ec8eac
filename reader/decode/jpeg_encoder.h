// JPEG encoding (libjpeg-turbo) and the re-encoding `convert image-folder
// --max-side N` applies: an image whose longer side exceeds N is decoded,
// resized with the antialiased triangle filter so its longer side is N, and
// stored as a baseline 4:2:0 JPEG of the given quality. Deterministic (same
// bytes for the same input and options). Thread-safe (no state).
#ifndef SHARDFEED_READER_DECODE_JPEG_ENCODER_H_
#define SHARDFEED_READER_DECODE_JPEG_ENCODER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

// rgb: height rows of width * 3 bytes. quality in 1..100.
absl::StatusOr<std::string> EncodeJpeg(const uint8_t* rgb, int width, int height, int quality);

struct Reencoded {
  bool changed = false;  // false: the image fits, keep the original bytes
  std::string bytes;     // the new JPEG when changed
  int width = 0, height = 0;
};

// Errors: as DecodeImageFull's (the caller adds the file name).
absl::StatusOr<Reencoded> ShrinkToMaxSide(absl::string_view encoded, int max_side, int quality);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODE_JPEG_ENCODER_H_
