// DecodeSpec: how the decode stage turns one variable-length feature into a
// fixed-shape row, parsed from the strings users write:
//
//   "image,random_resized_crop=224,flip"        uint8 [224, 224, 3] (training)
//   "image,resize=256,center_crop=224"          uint8 [224, 224, 3] (evaluation)
//   "image,resize=128x96"                       uint8 [96, 128, 3] (stretch)
//   "audio,length=16000,random_crop,rate=16000" float32 [channels, 16000] + NAME/length
//   "int64,length=128,pad=0"                    int64 [128] + NAME/length
//   "float32,length=16"                         float32 [16] + NAME/length
//
// Image options: random_resized_crop=S|WxH (torchvision's RandomResizedCrop),
// scale=MIN:MAX (0.08:1), ratio=MIN:MAX (0.75:1.3333), flip (horizontal, p=0.5),
// resize=S (shorter side) or WxH (both sides), center_crop=S|WxH, no_dct_scaling,
// format=jpeg|png (other formats are an error; default: either, by content).
// Audio options: length=N (required), channels=C (1), rate=R (0: any),
// random_crop (else the first N samples). List options: length=N (required),
// pad=X (0). Any kind: optional (records may lack the feature).
// Plain values; no state; thread-safe.
#ifndef SHARDFEED_READER_DECODE_DECODE_SPEC_H_
#define SHARDFEED_READER_DECODE_DECODE_SPEC_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace shardfeed {

enum class DecodeKind {
  kNone,      // the feature's bytes or numbers as they are
  kImage,     // encoded JPEG/PNG -> uint8 [H, W, 3]
  kAudio,     // WAV -> float32 [channels, length]
  kInt64List, // variable-length int64 list -> int64 [length]
  kFloatList, // variable-length float list -> float32 [length]
  kLengthOf,  // NAME/length: int64 scalar written by the decoder of NAME
};

enum class ImageMode { kRandomResizedCrop, kResizeCenterCrop, kResize };

struct ImageDecodeSpec {
  ImageMode mode = ImageMode::kResize;
  int out_w = 0, out_h = 0;  // the row's shape is [out_h, out_w, 3]
  int resize = 0;            // kResizeCenterCrop: shorter side before the crop
  bool flip = false;
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;
  bool dct_scaling = true;   // decode at 1/2, 1/4, 1/8 when the crop allows
  enum class Format { kAny, kJpeg, kPng } format = Format::kAny;  // format=jpeg|png
};

struct AudioDecodeSpec {
  int64_t length = 0;
  int channels = 1;
  int rate = 0;  // 0: any sample rate
  bool random_crop = false;
};

struct DecodeSpec {
  DecodeKind kind = DecodeKind::kNone;
  ImageDecodeSpec image;
  AudioDecodeSpec audio;
  int64_t list_length = 0;  // kInt64List / kFloatList
  double pad = 0;           // kInt64List / kFloatList
  bool optional = false;    // "optional": a missing feature is zeros / pad, length 0
  std::string text;         // as given, for messages and SpecToString
};

absl::StatusOr<DecodeSpec> ParseDecodeSpec(const std::string& text);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODE_DECODE_SPEC_H_
