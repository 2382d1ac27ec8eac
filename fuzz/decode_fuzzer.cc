// libFuzzer target over the decode stage's image and WAV decoders: any bytes
// must give OK or an INVALID_ARGUMENT / DATA_LOSS status, never a crash, a
// sanitizer report, a hang or unbounded memory. The first input byte picks
// the decoder and its options (crop mode, output size, flip, DCT scaling,
// audio length and crop), the rest is the encoded file.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "reader/decode/image_decoder.h"
#include "reader/decode/wav_decoder.h"

namespace {

void CheckCode(const absl::Status& s) {
  if (s.ok() || s.code() == absl::StatusCode::kInvalidArgument ||
      s.code() == absl::StatusCode::kDataLoss) {
    return;
  }
  std::fprintf(stderr, "unexpected status: %s\n", s.ToString().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardfeed;
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const absl::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode & 0x80) {
    AudioDecodeSpec spec;
    spec.length = 1 + (mode & 0x1f) * 37;
    spec.channels = 1 + ((mode >> 5) & 1);
    spec.random_crop = mode & 0x40;
    std::vector<float> out(spec.channels * spec.length);
    absl::StatusOr<int64_t> n = DecodeWavInto(bytes, spec, 1, mode, out.data());
    CheckCode(n.status());
    if (n.ok() && (*n < 0 || *n > spec.length)) std::abort();
    return 0;
  }
  ImageDecodeSpec spec;
  spec.out_w = 1 + (mode & 7) * 9;
  spec.out_h = 1 + ((mode >> 3) & 3) * 13;
  spec.mode = (mode & 0x20) ? ImageMode::kRandomResizedCrop : ImageMode::kResizeCenterCrop;
  spec.resize = (mode & 0x20) ? 0 : spec.out_w + 3;
  spec.flip = true;
  spec.dct_scaling = mode & 0x40;
  std::vector<uint8_t> out(static_cast<size_t>(spec.out_w) * spec.out_h * 3);
  CheckCode(CpuImageDecoder().DecodeInto(bytes, spec, 7, size, out.data()));
  if ((mode & 0x3f) == 0) {
    DecodedImage full;
    CheckCode(DecodeImageFull(bytes, &full));
  }
  return 0;
}
