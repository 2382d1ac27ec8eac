#include "reader/decode/decode_spec.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace shardfeed {
namespace {

constexpr int kMaxSide = 1 << 14;
constexpr int64_t kMaxLength = int64_t{1} << 28;

absl::Status Bad(const std::string& text, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("decode spec '", text, "': ", what));
}

// "224" -> 224x224, "128x96" -> w=128, h=96.
bool ParseSize(absl::string_view v, int* w, int* h) {
  std::vector<absl::string_view> parts = absl::StrSplit(v, 'x');
  if (parts.size() > 2 || !absl::SimpleAtoi(parts[0], w)) return false;
  if (parts.size() == 1) {
    *h = *w;
  } else if (!absl::SimpleAtoi(parts[1], h)) {
    return false;
  }
  return *w > 0 && *h > 0 && *w <= kMaxSide && *h <= kMaxSide;
}

bool ParseRange(absl::string_view v, double* lo, double* hi) {
  std::vector<absl::string_view> parts = absl::StrSplit(v, ':');
  return parts.size() == 2 && absl::SimpleAtod(parts[0], lo) && absl::SimpleAtod(parts[1], hi) &&
         *lo > 0 && *lo <= *hi;
}

absl::Status ParseImageOption(const std::string& text, absl::string_view key,
                              absl::string_view value, bool has_value, ImageDecodeSpec* s,
                              bool* has_center_crop) {
  if (key == "flip" && !has_value) {
    s->flip = true;
  } else if (key == "no_dct_scaling" && !has_value) {
    s->dct_scaling = false;
  } else if (key == "random_resized_crop" && ParseSize(value, &s->out_w, &s->out_h)) {
    s->mode = ImageMode::kRandomResizedCrop;
  } else if (key == "center_crop" && ParseSize(value, &s->out_w, &s->out_h)) {
    *has_center_crop = true;
  } else if (key == "resize" && value.find('x') != absl::string_view::npos &&
             ParseSize(value, &s->out_w, &s->out_h)) {
    s->mode = ImageMode::kResize;
  } else if (key == "resize" && absl::SimpleAtoi(value, &s->resize) && s->resize > 0 &&
             s->resize <= kMaxSide) {
    s->mode = ImageMode::kResizeCenterCrop;
  } else if (key == "format" && (value == "jpeg" || value == "png")) {
    s->format = value == "jpeg" ? ImageDecodeSpec::Format::kJpeg : ImageDecodeSpec::Format::kPng;
  } else if (key == "scale" && ParseRange(value, &s->scale_min, &s->scale_max) &&
             s->scale_max <= 1) {
  } else if (key == "ratio" && ParseRange(value, &s->ratio_min, &s->ratio_max)) {
  } else {
    std::string want;
    if (key == "random_resized_crop" || key == "center_crop" || key == "resize") {
      want = absl::StrCat("S or WxH, sizes 1..", kMaxSide);
    } else if (key == "scale") {
      want = "MIN:MAX, 0 < MIN <= MAX <= 1";
    } else if (key == "ratio") {
      want = "MIN:MAX, 0 < MIN <= MAX";
    } else if (key == "format") {
      want = "jpeg or png";
    } else if (key == "flip" || key == "no_dct_scaling") {
      want = "no value";
    } else {
      want = "options: random_resized_crop=, resize=, center_crop=, flip, scale=, ratio=, "
             "format=, no_dct_scaling, optional";
    }
    return Bad(text, absl::StrCat("bad image option '", key, has_value ? "=" : "", value, "' (",
                                  want, ")"));
  }
  return absl::OkStatus();
}

absl::Status ParseAudioOption(const std::string& text, absl::string_view key,
                              absl::string_view value, bool has_value, AudioDecodeSpec* s) {
  if (key == "random_crop" && !has_value) {
    s->random_crop = true;
  } else if (key == "length" && absl::SimpleAtoi(value, &s->length) && s->length > 0 &&
             s->length <= kMaxLength) {
  } else if (key == "channels" && absl::SimpleAtoi(value, &s->channels) && s->channels > 0 &&
             s->channels <= 64) {
  } else if (key == "rate" && absl::SimpleAtoi(value, &s->rate) && s->rate > 0) {
  } else {
    return Bad(text, absl::StrCat("bad audio option '", key, has_value ? "=" : "", value, "'"));
  }
  return absl::OkStatus();
}

absl::Status ParseListOption(const std::string& text, absl::string_view key,
                             absl::string_view value, DecodeSpec* s) {
  if (key == "length" && absl::SimpleAtoi(value, &s->list_length) && s->list_length > 0 &&
      s->list_length <= kMaxLength) {
  } else if (key == "pad" && absl::SimpleAtod(value, &s->pad)) {
  } else {
    return Bad(text, absl::StrCat("bad list option '", key, "=", value, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DecodeSpec> ParseDecodeSpec(const std::string& text) {
  std::vector<std::string> items =
      absl::StrSplit(text, ',', [](absl::string_view s) { return !absl::StripAsciiWhitespace(s).empty(); });
  if (items.empty()) return Bad(text, "empty");
  DecodeSpec spec;
  spec.text = text;
  const std::string kind(absl::StripAsciiWhitespace(items[0]));
  if (kind == "image") {
    spec.kind = DecodeKind::kImage;
  } else if (kind == "audio") {
    spec.kind = DecodeKind::kAudio;
  } else if (kind == "int64") {
    spec.kind = DecodeKind::kInt64List;
  } else if (kind == "float32" || kind == "float") {
    spec.kind = DecodeKind::kFloatList;
  } else {
    return Bad(text, "must start with image, audio, int64 or float32");
  }
  bool has_center_crop = false;
  for (size_t i = 1; i < items.size(); ++i) {
    const std::string item(absl::StripAsciiWhitespace(items[i]));
    const size_t eq = item.find('=');
    const bool has_value = eq != std::string::npos;
    const std::string key = item.substr(0, eq);
    const std::string value = has_value ? item.substr(eq + 1) : "";
    absl::Status s;
    if (item == "optional") {
      spec.optional = true;
    } else if (spec.kind == DecodeKind::kImage) {
      s = ParseImageOption(text, key, value, has_value, &spec.image, &has_center_crop);
    } else if (spec.kind == DecodeKind::kAudio) {
      s = ParseAudioOption(text, key, value, has_value, &spec.audio);
    } else {
      s = ParseListOption(text, key, value, &spec);
    }
    if (!s.ok()) return s;
  }
  if (spec.kind == DecodeKind::kImage) {
    ImageDecodeSpec& im = spec.image;
    if (im.mode == ImageMode::kResizeCenterCrop && !has_center_crop) {
      return Bad(text, "resize=S needs center_crop=C (or give resize=WxH)");
    }
    if (has_center_crop && im.mode == ImageMode::kResize && im.out_w > 0 && im.resize == 0) {
      im.mode = ImageMode::kResizeCenterCrop;  // center_crop alone: crop the image as it is
    }
    if (im.out_w == 0) return Bad(text, "needs random_resized_crop=, center_crop= or resize=WxH");
  } else if (spec.kind == DecodeKind::kAudio && spec.audio.length == 0) {
    return Bad(text, "needs length=N");
  } else if ((spec.kind == DecodeKind::kInt64List || spec.kind == DecodeKind::kFloatList) &&
             spec.list_length == 0) {
    return Bad(text, "needs length=N");
  }
  return spec;
}

}  // namespace shardfeed
