#include "converter/image_header.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace shardfeed {
namespace {

uint32_t Be16(const unsigned char* p) { return (uint32_t{p[0]} << 8) | p[1]; }
uint32_t Be32(const unsigned char* p) { return (Be16(p) << 16) | Be16(p + 2); }

// A corrupt or truncated image is a data problem (DATA_LOSS: exit 1), not a
// usage error.
absl::Status Bad(absl::string_view path, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(path, ": ", what));
}

absl::StatusOr<ImageInfo> ReadJpeg(absl::string_view b, absl::string_view path) {
  const auto* p = reinterpret_cast<const unsigned char*>(b.data());
  size_t i = 2;  // after SOI
  while (i + 4 <= b.size()) {
    if (p[i] != 0xff) return Bad(path, absl::StrCat("JPEG: no marker at byte ", i));
    unsigned char marker = p[i + 1];
    if (marker == 0xff) {  // fill byte
      ++i;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {  // no length
      i += 2;
      continue;
    }
    uint32_t length = Be16(p + i + 2);
    if (length < 2) return Bad(path, absl::StrCat("JPEG: bad segment length at byte ", i));
    // SOF0..SOF15 except DHT (c4), JPG (c8) and DAC (cc).
    if (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc) {
      if (i + 9 > b.size()) break;
      ImageInfo info{"jpeg", Be16(p + i + 7), Be16(p + i + 5)};
      if (info.width == 0 || info.height == 0) return Bad(path, "JPEG: zero width or height");
      return info;
    }
    if (marker == 0xd9 || marker == 0xda) break;  // end of image / start of scan
    i += 2 + length;
  }
  return Bad(path, "JPEG: no frame header (SOF) found; the file may be truncated");
}

}  // namespace

bool LooksLikeImage(absl::string_view h) {
  return absl::StartsWith(h, "\xff\xd8\xff") || absl::StartsWith(h, "\x89PNG\r\n\x1a\n") ||
         absl::StartsWith(h, "GIF87a") || absl::StartsWith(h, "GIF89a");
}

absl::StatusOr<ImageInfo> ReadImageInfo(absl::string_view b, absl::string_view path) {
  const auto* p = reinterpret_cast<const unsigned char*>(b.data());
  if (absl::StartsWith(b, "\xff\xd8\xff")) return ReadJpeg(b, path);
  if (absl::StartsWith(b, "\x89PNG\r\n\x1a\n")) {
    if (b.size() < 24 || b.substr(12, 4) != "IHDR") return Bad(path, "PNG: no IHDR chunk");
    return ImageInfo{"png", Be32(p + 16), Be32(p + 20)};
  }
  if (absl::StartsWith(b, "GIF87a") || absl::StartsWith(b, "GIF89a")) {
    if (b.size() < 10) return Bad(path, "GIF: truncated header");
    return ImageInfo{"gif", uint32_t{p[6]} | uint32_t{p[7]} << 8, uint32_t{p[8]} | uint32_t{p[9]} << 8};
  }
  return Bad(path, "not a JPEG, PNG or GIF image");
}

}  // namespace shardfeed
