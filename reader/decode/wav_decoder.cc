#include "reader/decode/wav_decoder.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "reader/decode/crop_geometry.h"

namespace shardfeed {
namespace {

constexpr uint16_t kPcm = 1, kFloat = 3, kExtensible = 0xFFFE;

uint32_t Le32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return u[0] | (u[1] << 8) | (u[2] << 16) | (static_cast<uint32_t>(u[3]) << 24);
}
uint16_t Le16(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}

absl::Status ParseFmt(absl::string_view fmt, WavFormat* w) {
  if (fmt.size() < 16) return absl::DataLossError("WAV: fmt chunk shorter than 16 bytes");
  uint16_t tag = Le16(fmt.data());
  w->channels = Le16(fmt.data() + 2);
  w->rate = static_cast<int>(std::min<uint32_t>(Le32(fmt.data() + 4), 1u << 30));
  const uint16_t block_align = Le16(fmt.data() + 12);
  w->bits = Le16(fmt.data() + 14);
  if (tag == kExtensible) {
    // cbSize(2) validBits(2) channelMask(4) then the sub-format GUID, whose
    // first two bytes are the format tag.
    if (fmt.size() < 26) return absl::DataLossError("WAV: extensible fmt chunk too short");
    tag = Le16(fmt.data() + 24);
  }
  w->is_float = tag == kFloat;
  const bool ok_int = tag == kPcm && (w->bits == 8 || w->bits == 16 || w->bits == 24 || w->bits == 32);
  const bool ok_float = tag == kFloat && (w->bits == 32 || w->bits == 64);
  if (!ok_int && !ok_float) {
    return absl::InvalidArgumentError(
        absl::StrCat("WAV: unsupported sample format (tag ", tag, ", ", w->bits, " bits)"));
  }
  if (w->channels == 0 || w->rate == 0 || block_align != w->channels * (w->bits / 8)) {
    return absl::DataLossError(absl::StrCat("WAV: inconsistent fmt chunk (", w->channels,
                                            " channels, block align ", block_align, ")"));
  }
  return absl::OkStatus();
}

float SampleAt(const char* p, int bits, bool is_float) {
  if (is_float) {
    if (bits == 32) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    double d;
    std::memcpy(&d, p, 8);
    return static_cast<float>(d);
  }
  switch (bits) {
    case 8:
      return (static_cast<uint8_t>(p[0]) - 128) * (1.0f / 128);
    case 16:
      return static_cast<int16_t>(Le16(p)) * (1.0f / 32768);
    case 24: {
      const auto* u = reinterpret_cast<const uint8_t*>(p);
      const uint32_t bits24 = u[0] | (u[1] << 8) | (static_cast<uint32_t>(u[2]) << 16);
      const int32_t v = static_cast<int32_t>(bits24 << 8) >> 8;  // sign-extend
      return static_cast<float>(v) * (1.0f / 8388608);
    }
    default:
      return static_cast<float>(static_cast<int32_t>(Le32(p))) * (1.0f / 2147483648.0f);
  }
}

}  // namespace

absl::StatusOr<WavFormat> ParseWav(absl::string_view data) {
  if (data.size() < 12 || data.substr(0, 4) != "RIFF" || data.substr(8, 4) != "WAVE") {
    return absl::InvalidArgumentError(data.empty() ? "WAV: empty (0 bytes)"
                                                   : "not a WAV file (no RIFF/WAVE header)");
  }
  WavFormat w;
  bool have_fmt = false;
  size_t pos = 12;
  while (pos + 8 <= data.size()) {
    const absl::string_view id = data.substr(pos, 4);
    const uint64_t size = Le32(data.data() + pos + 4);
    pos += 8;
    const uint64_t left = data.size() - pos;
    if (id == "fmt ") {
      if (size > left) return absl::DataLossError("WAV: fmt chunk cut short");
      absl::Status s = ParseFmt(data.substr(pos, size), &w);
      if (!s.ok()) return s;
      have_fmt = true;
    } else if (id == "data") {
      if (!have_fmt) return absl::DataLossError("WAV: data chunk before the fmt chunk");
      // 0xFFFFFFFF: a streamed file of unknown length, to the end.
      if (size > left && size != 0xFFFFFFFFu) {
        return absl::DataLossError(
            absl::StrCat("WAV: data chunk declares ", size, " bytes, ", left, " present"));
      }
      const int frame = w.channels * (w.bits / 8);
      w.frames = static_cast<int64_t>(std::min<uint64_t>(size, left) / frame);
      w.samples = data.substr(pos, static_cast<size_t>(w.frames) * frame);
      return w;
    }
    if (size > left) break;
    pos += size + (size & 1);  // chunks are padded to even sizes
  }
  return absl::DataLossError(have_fmt ? "WAV: no data chunk" : "WAV: no fmt chunk");
}

absl::StatusOr<int64_t> DecodeWavInto(absl::string_view data, const AudioDecodeSpec& spec,
                                      uint64_t seed, uint64_t sample, float* out) {
  absl::StatusOr<WavFormat> w = ParseWav(data);
  if (!w.ok()) return w.status();
  if (spec.rate != 0 && w->rate != spec.rate) {
    return absl::InvalidArgumentError(
        absl::StrCat("WAV: sample rate ", w->rate, " Hz, the decode spec wants ", spec.rate));
  }
  if (w->channels != spec.channels) {
    return absl::InvalidArgumentError(absl::StrCat("WAV: ", w->channels,
                                                   " channels, the decode spec wants ",
                                                   spec.channels));
  }
  int64_t start = 0;
  const int64_t n = std::min(w->frames, spec.length);
  if (w->frames > spec.length && spec.random_crop) {
    SampleStream stream(seed, sample);
    start = static_cast<int64_t>(stream.Next() % static_cast<uint64_t>(w->frames - spec.length + 1));
  }
  const int bytes = w->bits / 8, frame = bytes * w->channels;
  for (int c = 0; c < w->channels; ++c) {
    float* row = out + c * spec.length;
    const char* p = w->samples.data() + start * frame + c * bytes;
    for (int64_t i = 0; i < n; ++i, p += frame) row[i] = SampleAt(p, w->bits, w->is_float);
    std::fill(row + n, row + spec.length, 0.0f);
  }
  return n;
}

}  // namespace shardfeed
