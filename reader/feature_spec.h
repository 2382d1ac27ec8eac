// FeatureSpec: which features of each Example become which tensors.
//
// Fixed-shape features (the batch gets one row per record):
//   uint8  a single bytes value of exactly prod(shape) bytes, e.g. CIFAR's
//          image -> uint8 [3, 32, 32] (raw pixels, no decoding);
//   int64, float32  a list of exactly prod(shape) values (scalar: shape []).
// Variable-length bytes (e.g. JPEG files) become two host tensors: NAME, the
// values concatenated (uint8 [total]), and NAME/offsets (int64 [rows + 1]).
// A missing feature takes `default_value` when has_default, else it is an
// error naming the record's file and offset.
// Decoded features (ApplyDecodeSpecs, reader/decode/decode_spec.h): a
// variable-length bytes feature becomes a fixed row decoded from its value
// (image -> uint8 [H, W, 3], WAV -> float32 [C, L]), a variable-length number
// list a padded int64/float32 [L]; audio and lists add NAME/length (int64
// scalar: values before padding), filled by the decoder of NAME.
#ifndef SHARDFEED_READER_FEATURE_SPEC_H_
#define SHARDFEED_READER_FEATURE_SPEC_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"
#include "reader/decode/decode_spec.h"

namespace shardfeed {

// kFloat16 and kBFloat16 appear only as outputs of image transforms.
enum class DType { kUint8, kInt64, kFloat32, kFloat16, kBFloat16 };

const char* DTypeName(DType d);
size_t DTypeSize(DType d);

struct FeatureSpec {
  std::string name;
  DType dtype = DType::kUint8;
  std::vector<int64_t> shape;   // per record; [] is a scalar
  bool variable_length = false;  // bytes only: values + offsets
  bool has_default = false;
  double default_value = 0;      // fills every element when missing
  DecodeSpec decode;             // kind kNone: the value as it is
  std::string length_of;         // decode.kind == kLengthOf: the feature measured

  int64_t elements() const;      // prod(shape)
  size_t row_bytes() const { return elements() * DTypeSize(dtype); }
};

// The spec implied by a dataset's manifest: raw uint8 tensors for bytes
// features with a dtype/shape, scalars or fixed lists for numbers,
// variable-length bytes for the rest.
std::vector<FeatureSpec> SpecFromManifest(const Manifest& manifest);

// Parses "image:uint8[3,32,32],label:int64,jpeg:bytes,score:float32[2]=0".
// "=X" gives a default; "bytes" means variable-length.
absl::StatusOr<std::vector<FeatureSpec>> ParseSpec(const std::string& text);

// Applies {feature name -> decode spec text} (e.g. {"image/encoded":
// "image,random_resized_crop=224,flip"}) to `features`: image and audio specs
// turn a variable-length bytes feature into its decoded fixed shape; int64 /
// float32 list specs add (or reshape) a number feature; audio and lists add
// NAME/length after NAME. "optional" in a spec lets a record lack the
// feature (zeros / the pad value, length 0). Applying the same spec twice is
// a no-op. INVALID_ARGUMENT for a bad spec, an unknown feature, or a feature
// of the wrong kind.
absl::Status ApplyDecodeSpecs(const std::map<std::string, std::string>& decode,
                              std::vector<FeatureSpec>* features);

// "image/encoded=image,random_resized_crop=224,flip;label=int64,length=4":
// the CLI's --decode, several joined by ';'.
absl::StatusOr<std::map<std::string, std::string>> ParseDecodeOption(const std::string& text);

std::string SpecToString(const std::vector<FeatureSpec>& spec);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_FEATURE_SPEC_H_
