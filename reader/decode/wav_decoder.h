// WAV decoding for the decode stage: RIFF/WAVE with PCM 8 (unsigned), 16,
// 24 or 32-bit integer samples or 32/64-bit float samples (also through
// WAVE_FORMAT_EXTENSIBLE), any channel count, becomes float32
// [channels, length]: integers scaled to [-1, 1) by 2^(bits-1) as
// tf.audio.decode_wav does, a random window of `length` samples when the file
// is longer and random_crop is set (else its first samples), zeros after the
// end when it is shorter.
//
// Errors: INVALID_ARGUMENT for what is not a WAV file, an unsupported sample
// format, or a rate / channel count other than the spec's; DATA_LOSS when the
// data chunk is cut short or the header is inconsistent. No allocation: the
// samples go straight to the caller's row. Thread-safe (no state).
#ifndef SHARDFEED_READER_DECODE_WAV_DECODER_H_
#define SHARDFEED_READER_DECODE_WAV_DECODER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "reader/decode/decode_spec.h"

namespace shardfeed {

struct WavFormat {
  int channels = 0;
  int rate = 0;
  int bits = 0;
  bool is_float = false;
  int64_t frames = 0;            // samples per channel
  absl::string_view samples;     // the interleaved sample bytes
};

absl::StatusOr<WavFormat> ParseWav(absl::string_view data);

// Writes spec.channels * spec.length floats to out (channel-major); returns
// the number of samples per channel taken from the file (before padding).
absl::StatusOr<int64_t> DecodeWavInto(absl::string_view data, const AudioDecodeSpec& spec,
                                      uint64_t seed, uint64_t sample, float* out);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODE_WAV_DECODER_H_
