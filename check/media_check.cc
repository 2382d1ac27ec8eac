#include "check/media_check.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "reader/decode/image_codecs.h"
#include "reader/decode/image_decoder.h"
#include "reader/decode/wav_decoder.h"
#include "reader/example_wire.h"

namespace shardfeed {
namespace {

enum class Signature { kNone, kJpeg, kPng, kWav, kGif, kWebp };

Signature Sniff(absl::string_view v) {
  if (LooksLikeJpeg(v)) return Signature::kJpeg;
  if (LooksLikePng(v)) return Signature::kPng;
  if (v.size() >= 12 && absl::StartsWith(v, "RIFF")) {
    if (v.substr(8, 4) == "WAVE") return Signature::kWav;
    if (v.substr(8, 4) == "WEBP") return Signature::kWebp;
  }
  if (absl::StartsWith(v, "GIF87a") || absl::StartsWith(v, "GIF89a")) return Signature::kGif;
  return Signature::kNone;
}

bool Decodable(Signature s) {
  return s == Signature::kJpeg || s == Signature::kPng || s == Signature::kWav;
}

// Why the decode stage cannot read a value without a decodable signature.
std::string WhyNotDecodable(Signature s, absl::string_view v) {
  if (s == Signature::kGif) return "a GIF image: the decode stage reads JPEG and PNG only";
  if (s == Signature::kWebp) return "a WebP image: the decode stage reads JPEG and PNG only";
  if (v.empty()) return "empty (0 bytes)";
  std::string hex;
  for (size_t i = 0; i < std::min<size_t>(v.size(), 4); ++i) {
    absl::StrAppendFormat(&hex, " %02x", static_cast<uint8_t>(v[i]));
  }
  return absl::StrCat("not a JPEG, PNG or WAV file (starts with", hex, ")");
}

// The record's source file, as converted datasets carry it.
constexpr absl::string_view kSourceKeys[] = {"image/filename", "filename"};

}  // namespace

MediaSchema MediaSchemaFor(const Manifest* manifest, int decode) {
  MediaSchema m;
  m.full_decode = decode == 1;
  if (manifest == nullptr) return m;
  if (manifest->source_type() == "image-folder") {
    m.images.insert("image/encoded");
    if (decode < 0) m.full_decode = true;
  }
  for (const FeatureSchema& f : manifest->features()) {
    if (!f.dtype().empty()) m.raw.insert(f.name());
  }
  return m;
}

void MediaChecker::Report(int64_t offset, std::string what, absl::string_view source,
                          std::vector<CheckProblem>* to, int64_t* count) {
  if ((*count)++ >= max_problems_) return;
  CheckProblem p{path_, offset, std::move(what)};
  p.source = std::string(source);
  to->push_back(std::move(p));
}

void MediaChecker::Add(absl::string_view record, int64_t offset) {
  absl::InlinedVector<std::pair<absl::string_view, FeatureView>, 16> features;
  std::vector<absl::string_view> feature_lists;
  absl::Status walked = WalkExampleOrSequence(
      record,
      [&](absl::string_view key, const FeatureView& f) {
        for (auto& [k, v] : features) {
          if (k == key) {  // the last one wins, as in protobuf
            v = f;
            return absl::OkStatus();
          }
        }
        features.emplace_back(key, f);
        return absl::OkStatus();
      },
      &feature_lists);
  if (!walked.ok()) return;  // the schema check reports records that do not parse
  absl::string_view source;
  std::vector<absl::string_view> values;
  for (absl::string_view want : kSourceKeys) {
    for (const auto& [key, f] : features) {
      if (key != want || f.kind != FeatureKind::kBytes || !source.empty()) continue;
      values.clear();
      if (DecodeBytes(f, &values).ok() && !values.empty()) source = values[0];
    }
  }
  for (const auto& [key, f] : features) {
    if (f.kind != FeatureKind::kBytes || schema_->raw.count(key)) continue;
    values.clear();
    if (!DecodeBytes(f, &values).ok()) continue;
    const bool declared = schema_->images.count(key) > 0;
    FeatureTally* tally = nullptr;
    for (size_t i = 0; i < values.size(); ++i) {
      const absl::string_view v = values[i];
      const Signature sig = Sniff(v);
      if (tally == nullptr) {  // no allocation once the feature is known
        auto it = tallies_.find(key);
        if (it == tallies_.end()) it = tallies_.emplace(std::string(key), FeatureTally()).first;
        tally = &it->second;
      }
      ++tally->values;
      if (Decodable(sig)) ++tally->media;
      std::string error;
      if (sig == Signature::kJpeg || sig == Signature::kPng) {
        absl::Status s = VerifyImage(v, /*header_only=*/!schema_->full_decode);
        if (!s.ok()) error = std::string(s.message());
      } else if (sig == Signature::kWav) {
        absl::StatusOr<WavFormat> wav = ParseWav(v);
        if (!wav.ok()) error = std::string(wav.status().message());
      } else if (declared) {
        error = WhyNotDecodable(sig, v);
      }
      const std::string what_value =
          values.size() == 1 ? absl::StrCat("feature '", key, "'")
                             : absl::StrCat("feature '", key, "' value ", i);
      if (!error.empty()) {
        Report(offset, absl::StrCat(what_value, ": ", error), source, &problems_, &reported_);
      } else if (!Decodable(sig) && !declared) {
        // A problem only if the feature turns out to hold media.
        if (tally->first_suspects.size() < static_cast<size_t>(max_problems_)) {
          CheckProblem p{path_, offset, absl::StrCat(what_value, ": ", WhyNotDecodable(sig, v))};
          p.source = std::string(source);
          tally->first_suspects.push_back(std::move(p));
        }
        ++tally->suspects;
      }
    }
  }
  if (reported_ > max_problems_ && !said_more_) {
    problems_.push_back({path_, -1, "more images or audio that do not decode are not listed"});
    said_more_ = true;
  }
}

void ResolveSuspects(const std::vector<const MediaChecker*>& checkers,
                     std::vector<CheckProblem>* problems) {
  std::map<std::string, std::pair<int64_t, int64_t>, std::less<>> totals;  // values, media
  for (const MediaChecker* c : checkers) {
    for (const auto& [key, t] : c->tallies()) {
      totals[key].first += t.values;
      totals[key].second += t.media;
    }
  }
  for (const MediaChecker* c : checkers) {
    for (const auto& [key, t] : c->tallies()) {
      const auto& [values, media] = totals[key];
      if (t.suspects == 0 || media * 2 <= values) continue;
      problems->insert(problems->end(), t.first_suspects.begin(), t.first_suspects.end());
      const int64_t unlisted = t.suspects - static_cast<int64_t>(t.first_suspects.size());
      if (unlisted > 0 && !t.first_suspects.empty()) {
        problems->push_back({t.first_suspects[0].file, -1,
                             absl::StrCat(unlisted, " more values of feature '", key,
                                          "' that the decode stage cannot read are not listed")});
      }
    }
  }
}

}  // namespace shardfeed
