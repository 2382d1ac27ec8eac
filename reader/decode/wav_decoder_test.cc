// WAV files built byte by byte here, with the values tf.audio.decode_wav
// gives for them (integer / 2^(bits-1), unsigned 8-bit offset by 128).
#include "reader/decode/wav_decoder.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace shardfeed {
namespace {

void Put16(std::string* s, uint16_t v) { s->push_back(char(v & 255)), s->push_back(char(v >> 8)); }
void Put32(std::string* s, uint32_t v) { Put16(s, v & 0xffff), Put16(s, v >> 16); }

std::string Wav(uint16_t tag, int channels, int rate, int bits, const std::string& samples,
                bool extensible = false, uint32_t data_size = 0) {
  std::string fmt;
  Put16(&fmt, extensible ? 0xFFFE : tag);
  Put16(&fmt, channels);
  Put32(&fmt, rate);
  Put32(&fmt, rate * channels * bits / 8);
  Put16(&fmt, channels * bits / 8);
  Put16(&fmt, bits);
  if (extensible) {
    Put16(&fmt, 22);
    Put16(&fmt, bits);
    Put32(&fmt, 3);
    Put16(&fmt, tag);
    fmt += std::string("\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71", 14);
  }
  std::string body = "WAVEfmt ";
  Put32(&body, fmt.size());
  body += fmt + "LIST";  // an unrelated odd-sized chunk, padded
  Put32(&body, 3);
  body += std::string("abc\0", 4) + "data";
  Put32(&body, data_size ? data_size : samples.size());
  body += samples;
  std::string out = "RIFF";
  Put32(&out, body.size());
  return out + body;
}

std::vector<float> Decode(const std::string& wav, AudioDecodeSpec spec, int64_t* n,
                          uint64_t sample = 0) {
  std::vector<float> out(spec.channels * spec.length, -9);
  absl::StatusOr<int64_t> got = DecodeWavInto(wav, spec, 1, sample, out.data());
  EXPECT_TRUE(got.ok()) << got.status();
  *n = got.ok() ? *got : -1;
  return out;
}

TEST(Wav, Pcm16MonoPadsWithZeros) {
  std::string s;
  for (int16_t v : {0, 16384, -32768, 32767}) Put16(&s, static_cast<uint16_t>(v));
  AudioDecodeSpec spec{6, 1, 16000, false};
  int64_t n;
  std::vector<float> out = Decode(Wav(1, 1, 16000, 16, s), spec, &n);
  EXPECT_EQ(n, 4);
  EXPECT_EQ(out, (std::vector<float>{0, 0.5f, -1, 32767 / 32768.0f, 0, 0}));
}

TEST(Wav, EveryIntegerWidthAndFloat) {
  AudioDecodeSpec spec{2, 1, 0, false};
  int64_t n;
  EXPECT_EQ(Decode(Wav(1, 1, 8000, 8, std::string("\x00\xc0", 2)), spec, &n), (std::vector<float>{-1, 0.5f}));
  EXPECT_EQ(Decode(Wav(1, 1, 8000, 24, std::string("\x00\x00\x80\x00\x00\x40", 6)), spec, &n),
            (std::vector<float>{-1, 0.5f}));
  std::string s32;
  Put32(&s32, 0x80000000u);
  Put32(&s32, 0x20000000u);
  EXPECT_EQ(Decode(Wav(1, 1, 8000, 32, s32), spec, &n), (std::vector<float>{-1, 0.25f}));
  std::string f32(8, '\0');
  const float fv[2] = {0.125f, -2.5f};  // float samples pass through, unclipped
  std::memcpy(&f32[0], fv, 8);
  EXPECT_EQ(Decode(Wav(3, 1, 8000, 32, f32), spec, &n), (std::vector<float>{0.125f, -2.5f}));
  EXPECT_EQ(Decode(Wav(3, 1, 8000, 32, f32, /*extensible=*/true), spec, &n),
            (std::vector<float>{0.125f, -2.5f}));
}

TEST(Wav, StereoBecomesChannelMajor) {
  std::string s;
  for (int16_t v : {1, -1, 2, -2, 3, -3}) Put16(&s, static_cast<uint16_t>(v * 4096));
  AudioDecodeSpec spec{2, 2, 0, false};
  int64_t n;
  std::vector<float> out = Decode(Wav(1, 2, 44100, 16, s), spec, &n);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(out, (std::vector<float>{0.125f, 0.25f, -0.125f, -0.25f}));
}

// random_crop: a window at an offset that depends on (seed, sample) only,
// covering every offset over many samples; without it, the first samples.
TEST(Wav, RandomCropIsAWindowKeyedBySample) {
  std::string s;
  for (int i = 0; i < 10; ++i) Put16(&s, static_cast<uint16_t>(i * 1024));
  const std::string wav = Wav(1, 1, 16000, 16, s);
  AudioDecodeSpec spec{4, 1, 16000, true};
  std::set<float> starts;
  for (int sample = 0; sample < 200; ++sample) {
    int64_t n;
    std::vector<float> out = Decode(wav, spec, &n, sample);
    EXPECT_EQ(n, 4);
    for (int i = 1; i < 4; ++i) EXPECT_FLOAT_EQ(out[i] - out[i - 1], 1024 / 32768.0f);
    EXPECT_EQ(out, Decode(wav, spec, &n, sample));
    starts.insert(out[0]);
  }
  EXPECT_EQ(starts.size(), 7u);  // offsets 0..6
  spec.random_crop = false;
  int64_t n;
  EXPECT_EQ(Decode(wav, spec, &n)[0], 0.0f);
}

TEST(Wav, BadInputNamesTheProblem) {
  std::vector<float> out(8);
  AudioDecodeSpec spec{8, 1, 16000, false};
  auto code = [&](const std::string& wav) {
    return DecodeWavInto(wav, spec, 0, 0, out.data()).status().code();
  };
  const std::string good = Wav(1, 1, 16000, 16, std::string(8, '\0'));
  EXPECT_EQ(code(good), absl::StatusCode::kOk);
  EXPECT_EQ(code(Wav(1, 1, 22050, 16, std::string(8, '\0'))), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Wav(1, 2, 16000, 16, std::string(8, '\0'))), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Wav(2, 1, 16000, 16, std::string(8, '\0'))), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(Wav(1, 1, 16000, 12, std::string(8, '\0'))), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("GIF89a......"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(good.substr(0, good.size() - 3)), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(good.substr(0, 30)), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(Wav(1, 1, 16000, 16, std::string(8, '\0'), false, 1u << 31)),
            absl::StatusCode::kDataLoss);
  absl::Status rate = DecodeWavInto(Wav(1, 1, 22050, 16, "\0\0"), spec, 0, 0, out.data()).status();
  EXPECT_NE(rate.message().find("22050"), std::string::npos) << rate;
}

}  // namespace
}  // namespace shardfeed
