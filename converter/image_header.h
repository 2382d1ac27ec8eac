// Reads an image's format and size from its header, without decoding:
// JPEG (the SOFn marker), PNG (IHDR) and GIF (logical screen descriptor).
#ifndef SHARDFEED_CONVERTER_IMAGE_HEADER_H_
#define SHARDFEED_CONVERTER_IMAGE_HEADER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

struct ImageInfo {
  std::string format;  // "jpeg", "png" or "gif" (TF-Slim's image/format)
  int64_t width = 0;
  int64_t height = 0;
};

// True if the first bytes carry a JPEG, PNG or GIF signature.
bool LooksLikeImage(absl::string_view head);

// Parses `bytes` (the whole file, or at least its header); DATA_LOSS
// "PATH: what" if it is no such image or the header is damaged or cut short.
absl::StatusOr<ImageInfo> ReadImageInfo(absl::string_view bytes, absl::string_view path);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_IMAGE_HEADER_H_
